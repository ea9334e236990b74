package io.pidpool.core.singleflight;

import static io.pidpool.core.error.Preconditions.requireArgument;

/**
 * Single-flight keys and where they live: {@code /single-flight/<key>/lock} and {@code
 * /single-flight/<key>/result}, relative to the namespace {@code pidpool/<cluster>}.
 */
public final class FlightKeys {
    /** Longest key, in characters. */
    public static final int MAX_KEY_LENGTH = 128;

    private static final String ROOT = "/single-flight";

    private FlightKeys() {}

    /**
     * {@code key} if it is 1-128 characters of {@code [A-Za-z0-9_.:-]} and not {@code .} or {@code
     * ..}: one ZooKeeper path segment, never a path.
     */
    public static String requireKey(String key) {
        requireArgument(key != null, "key", "key is required");
        boolean ok = key.length() >= 1 && key.length() <= MAX_KEY_LENGTH && !key.equals(".") && !key.equals("..");
        for (int i = 0; ok && i < key.length(); i++) {
            char c = key.charAt(i);
            ok = (c >= 'a' && c <= 'z')
                    || (c >= 'A' && c <= 'Z')
                    || (c >= '0' && c <= '9')
                    || c == '_'
                    || c == '-'
                    || c == '.'
                    || c == ':';
        }
        requireArgument(ok, "key", "key must be 1-%d characters of [A-Za-z0-9_.:-], was '%s'", MAX_KEY_LENGTH, key);
        return key;
    }

    /** {@code /single-flight}: the parent of every key. */
    public static String root() {
        return ROOT;
    }

    /** {@code /single-flight/<key>}: a container node, removed by ZooKeeper once it is empty. */
    public static String keyPath(String key) {
        return ROOT + "/" + requireKey(key);
    }

    /** {@code /single-flight/<key>/lock}: EPHEMERAL, the holder's session. */
    public static String lockPath(String key) {
        return keyPath(key) + "/lock";
    }

    /** {@code /single-flight/<key>/result}: PERSISTENT, a {@link FlightRecord}. */
    public static String resultPath(String key) {
        return keyPath(key) + "/result";
    }
}
