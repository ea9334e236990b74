package io.pidpool.core.error;

/**
 * What went wrong, in terms a caller can act on. The HTTP layer and the SDK map these codes to
 * status codes and exceptions in one place each.
 */
public enum ErrorCode {
    /** The input is malformed or breaks a rule (bad key, negative quota, duplicate in a batch). */
    INVALID_ARGUMENT(false),
    /** A referenced thing does not exist (unknown module, unknown PID, unknown deduction). */
    NOT_FOUND(false),
    /** The thing already exists (duplicate PID, duplicate refund id with other content). */
    CONFLICT(false),
    /** A state transition that the state machine forbids. */
    ILLEGAL_STATE(false),
    /** The caller may not do this. */
    FORBIDDEN(false),
    /** This node is not (or no longer) the leader; its write was fenced off. */
    FENCED(false),
    /** A dependency (ZooKeeper, Redis, database) is unreachable or timed out: try again. */
    UNAVAILABLE(true);

    private final boolean retryable;

    ErrorCode(boolean retryable) {
        this.retryable = retryable;
    }

    /** Whether the same request may succeed if simply sent again later. */
    public boolean retryable() {
        return retryable;
    }
}
