package io.pidpool.core.error;

/**
 * The one exception type PidPool's own code throws across a port. Adapters translate
 * {@code KeeperException}, {@code RedisException}, {@code JdbiException} and the like into it, so
 * callers never depend on an adapter's exception types.
 */
public class PidPoolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final String field;

    public PidPoolException(ErrorCode code, String message) {
        this(code, null, message, null);
    }

    public PidPoolException(ErrorCode code, String field, String message) {
        this(code, field, message, null);
    }

    public PidPoolException(ErrorCode code, String field, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
        this.field = field;
    }

    public ErrorCode code() {
        return code;
    }

    /** The input field the error is about, or {@code null} if it is not about one field. */
    public String field() {
        return field;
    }

    public static PidPoolException invalid(String field, String template, Object... args) {
        return new PidPoolException(ErrorCode.INVALID_ARGUMENT, field, String.format(template, args));
    }

    public static PidPoolException notFound(String field, String template, Object... args) {
        return new PidPoolException(ErrorCode.NOT_FOUND, field, String.format(template, args));
    }

    public static PidPoolException conflict(String field, String template, Object... args) {
        return new PidPoolException(ErrorCode.CONFLICT, field, String.format(template, args));
    }

    public static PidPoolException illegalState(String template, Object... args) {
        return new PidPoolException(ErrorCode.ILLEGAL_STATE, String.format(template, args));
    }

    public static PidPoolException unavailable(String message, Throwable cause) {
        return new PidPoolException(ErrorCode.UNAVAILABLE, null, message, cause);
    }
}
