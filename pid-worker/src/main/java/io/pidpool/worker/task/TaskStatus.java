package io.pidpool.worker.task;

import io.pidpool.core.error.PidPoolException;

/**
 * Status of a task row. PENDING rows are fetched and claimed (PENDING → RUNNING, a conditional
 * update); RUNNING rows end DONE, go back to PENDING (retry, release at shutdown, expired lease)
 * or end FAILED (attempts used up, non-retryable error). DONE and FAILED are final.
 */
public enum TaskStatus {
    PENDING,
    RUNNING,
    DONE,
    FAILED;

    /** Whether a row may move from {@code from} (null: not yet inserted) to this status. */
    public boolean canFollow(TaskStatus from) {
        return switch (this) {
            case PENDING -> from == null || from == RUNNING;
            case RUNNING -> from == PENDING;
            case DONE, FAILED -> from == RUNNING;
        };
    }

    public boolean isFinal() {
        return this == DONE || this == FAILED;
    }

    /** Throws {@link io.pidpool.core.error.ErrorCode#ILLEGAL_STATE} unless {@code from → this} is legal. */
    public void assertValidTransition(TaskStatus from) {
        if (!canFollow(from)) {
            throw PidPoolException.illegalState("task status cannot go from %s to %s", from, this);
        }
    }
}
