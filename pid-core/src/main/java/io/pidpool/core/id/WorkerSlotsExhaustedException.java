package io.pidpool.core.id;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;

/**
 * Every worker-id slot 0..31 is taken. Retryable ({@link ErrorCode#UNAVAILABLE}): a slot frees when
 * a holder releases it or its ZooKeeper session expires.
 */
public final class WorkerSlotsExhaustedException extends PidPoolException {
    private static final long serialVersionUID = 1L;

    public WorkerSlotsExhaustedException(String where) {
        super(
                ErrorCode.UNAVAILABLE,
                "workerId",
                String.format(
                        "all %d worker-id slots 0..%d are taken%s",
                        WorkerSlots.COUNT, WorkerSlots.COUNT - 1, where == null ? "" : " at " + where));
    }
}
