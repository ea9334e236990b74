package io.pidpool.worker.runtime;

import io.pidpool.core.ring.SlotRange;
import java.util.Map;

/**
 * What a worker reports. Every method has an empty default, so an implementation overrides what
 * it records. Called from the worker's loop and handler threads: implementations must be
 * thread-safe and must not block.
 */
public interface WorkerMetrics {
    WorkerMetrics NOOP = new WorkerMetrics() {};

    /** {@code count} tasks of {@code type} ended DONE. */
    default void tasksDone(String type, int count) {}

    /** A task of {@code type} failed and was scheduled for another attempt. */
    default void taskRetried(String type) {}

    /** A task of {@code type} ended FAILED (attempts used up or not retryable). */
    default void taskFailed(String type) {}

    /** A handler of {@code type} ran past the handler timeout and was interrupted. */
    default void handlerTimedOut(String type) {}

    /** {@code count} fetched tasks were claimed by another worker first (ring overlap). */
    default void claimConflicts(int count) {}

    /** {@code count} settlements found their claim gone (lease expired and reclaimed or reaped). */
    default void settlementsLost(int count) {}

    /** This worker's reaper returned {@code returned} expired leases to PENDING and failed {@code failed}. */
    default void leasesReaped(int returned, int failed) {}

    /** A task-store call of the loop failed ({@code operation}: claim, settle, reap, backlog, purge). */
    default void storeError(String operation) {}

    /** PENDING tasks per owned range, refreshed every backlog interval. */
    default void backlog(Map<SlotRange, Long> pendingByRange) {}

    /**
     * PENDING tasks per task type that no live member of the group runs (they wait for a worker with
     * that handler), refreshed every backlog interval on the group's reporter; empty on other members.
     */
    default void unhandledBacklog(Map<String, Long> pendingByType) {}
}
