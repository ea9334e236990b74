package io.pidpool.worker.task;

/**
 * Runs one task type. Registered per type on a {@code WorkerPool} (or found through a {@link
 * TaskHandlerProvider} by the standalone worker).
 *
 * <p><b>Contract (at-least-once).</b> A task may be handed to {@code handle} more than once, also on
 * different workers, so the effect must be idempotent (an upsert keyed by the task key, a
 * deduplication id sent to a webhook). Returning normally means done. A {@link RuntimeException}
 * means failed: the task is retried with exponential backoff until its attempts are used up, or
 * ends FAILED at once for a {@link NonRetryableTaskException}. A handler that runs longer than the
 * pool's handler timeout is interrupted and counted as failed; it must stop promptly on interrupt,
 * because once the lease ends another worker may start the task again.
 *
 * <p>Called from the pool's handler threads, possibly concurrently for different tasks.
 */
@FunctionalInterface
public interface TaskHandler {
    void handle(Task task);
}
