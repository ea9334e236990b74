package io.pidpool.core.singleflight;

/**
 * The work of a single-flight round threw on the participant that ran it. Every caller that waited
 * for that round receives this exception; callers arriving after the round compete afresh.
 */
public final class FlightFailedException extends RuntimeException {
    private final String key;
    private final String errorType;
    private final String errorMessage;

    public FlightFailedException(String key, String errorType, String errorMessage, Throwable cause) {
        super(
                "single-flight '" + key + "': the work failed with " + errorType
                        + (errorMessage.isEmpty() ? "" : ": " + errorMessage),
                cause);
        this.key = key;
        this.errorType = errorType;
        this.errorMessage = errorMessage;
    }

    public String key() {
        return key;
    }

    /** The class name of what the work threw. */
    public String errorType() {
        return errorType;
    }

    /** Its message (at most 1,000 characters), or empty. */
    public String errorMessage() {
        return errorMessage;
    }
}
