package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.regex.Pattern;

/**
 * Rules for the names PidPool puts into ZooKeeper paths, database keys and Redis keys. One rule
 * for all of them keeps a name that is valid in one place valid in every other.
 */
public final class Names {
    /** Letters, digits, '_', '-', '.'; 1..64 characters; no '/', '#', '{', '}' or spaces. */
    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

    private static final Pattern PID = Pattern.compile("[A-Za-z0-9_.\\-@]{1,128}");

    private Names() {}

    /** Validates one part of a name (a module key part, an instance id). */
    public static String requireToken(String value, String field) {
        requireArgument(value != null, field, "%s is required", field);
        requireArgument(
                TOKEN.matcher(value).matches() && !value.equals(".") && !value.equals(".."),
                field,
                "%s must be 1-64 characters of [A-Za-z0-9_.-], was '%s'",
                field,
                value);
        return value;
    }

    /** Validates a PID (third-party account) id. */
    public static String requirePidId(String value, String field) {
        requireArgument(value != null, field, "%s is required", field);
        requireArgument(
                PID.matcher(value).matches() && !value.equals(".") && !value.equals(".."),
                field,
                "%s must be 1-128 characters of [A-Za-z0-9_.@-], was '%s'",
                field,
                value);
        return value;
    }
}
