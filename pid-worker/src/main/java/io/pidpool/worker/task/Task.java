package io.pidpool.worker.task;

/**
 * One row of the task table. Times are epoch milliseconds of the writers' {@link java.time.Clock}.
 *
 * @param attempts how many times the task has been claimed (a claim counts as an attempt; a
 *     release at graceful shutdown gives it back)
 * @param leaseUntilMs while RUNNING: when the claim expires and the task may be reclaimed; else 0
 * @param owner member id of the worker that claimed it last, or null
 * @param claimId the fencing token of the last claim: settling a task requires it, or 0
 * @param lastError the last failure, or null
 */
public record Task(
        long id,
        String group,
        long slot,
        String type,
        String key,
        String body,
        TaskStatus status,
        int attempts,
        int maxAttempts,
        long nextAttemptAtMs,
        long leaseUntilMs,
        String owner,
        long claimId,
        String lastError,
        long createdAtMs,
        long updatedAtMs) {

    /** Whether a failure now would use up the last attempt. */
    public boolean lastAttempt() {
        return attempts >= maxAttempts;
    }
}
