package io.pidpool.core.error;

/** Argument and state checks that throw {@link PidPoolException} with a message template. */
public final class Preconditions {
    private Preconditions() {}

    /** Throws {@link ErrorCode#INVALID_ARGUMENT} about {@code field} unless {@code condition}. */
    public static void requireArgument(boolean condition, String field, String template, Object... args) {
        if (!condition) {
            throw PidPoolException.invalid(field, template, args);
        }
    }

    /** Throws {@link ErrorCode#ILLEGAL_STATE} unless {@code condition}. */
    public static void requireState(boolean condition, String template, Object... args) {
        if (!condition) {
            throw PidPoolException.illegalState(template, args);
        }
    }

    /** Returns {@code value} if it is not null, else throws about {@code field}. */
    public static <T> T requireNonNull(T value, String field) {
        if (value == null) {
            throw PidPoolException.invalid(field, "%s is required", field);
        }
        return value;
    }
}
