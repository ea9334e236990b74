package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * Rules for the names PidPool puts into ZooKeeper paths, database keys and Redis keys. One rule
 * for all of them keeps a name that is valid in one place valid in every other.
 */
public final class Names {
    // tokens: letters, digits, '_', '-', '.'; 1..64 characters; no '/', '#', '{', '}' or spaces.
    // PID ids: the same plus '@', 1..128 characters.

    private Names() {}

    /** Validates one part of a name (a module key part, an instance id). */
    public static String requireToken(String value, String field) {
        requireArgument(value != null, field, "%s is required", field);
        if (!valid(value, 64, false)) {
            requireArgument(false, field, "%s must be 1-64 characters of [A-Za-z0-9_.-], was '%s'", field, value);
        }
        return value;
    }

    /** Validates a PID (third-party account) id. */
    public static String requirePidId(String value, String field) {
        requireArgument(value != null, field, "%s is required", field);
        if (!valid(value, 128, true)) {
            requireArgument(false, field, "%s must be 1-128 characters of [A-Za-z0-9_.@-], was '%s'", field, value);
        }
        return value;
    }

    /**
     * {@code [A-Za-z0-9_.-]{1,max}} (plus {@code @} if {@code at}), and not {@code .} or {@code ..}. A
     * loop rather than a regex: this runs for every permit.
     */
    private static boolean valid(String value, int max, boolean at) {
        int n = value.length();
        if (n < 1 || n > max) {
            return false;
        }
        boolean dotsOnly = true;
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '_'
                    || c == '-'
                    || c == '.'
                    || (at && c == '@');
            if (!ok) {
                return false;
            }
            dotsOnly &= c == '.';
        }
        return !(dotsOnly && n <= 2);
    }
}
