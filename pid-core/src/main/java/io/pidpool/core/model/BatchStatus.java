package io.pidpool.core.model;

import io.pidpool.core.error.PidPoolException;

/** Where an operator batch is: recorded, being applied by the leader, applied, or failed. */
public enum BatchStatus {
    PENDING,
    DEALING,
    DEALED,
    FAILED;

    public boolean canFollow(BatchStatus from) {
        return switch (this) {
            case PENDING -> from == null;
            // a leader that dies mid-batch leaves DEALING; its successor picks the batch up again
            case DEALING -> from == PENDING || from == DEALING;
            case DEALED, FAILED -> from == PENDING || from == DEALING;
        };
    }

    public BatchStatus assertCanFollow(BatchStatus from) {
        if (!canFollow(from)) {
            throw PidPoolException.illegalState("batch cannot go from %s to %s", from == null ? "(new)" : from, this);
        }
        return this;
    }

    public boolean isFinal() {
        return this == DEALED || this == FAILED;
    }
}
