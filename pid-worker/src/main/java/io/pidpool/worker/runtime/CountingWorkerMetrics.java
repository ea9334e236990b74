package io.pidpool.worker.runtime;

import io.pidpool.core.ring.SlotRange;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** {@link WorkerMetrics} as plain counters: for tests, logs and the standalone worker. Thread-safe. */
public final class CountingWorkerMetrics implements WorkerMetrics {
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    private final AtomicLong conflicts = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong reapedReturned = new AtomicLong();
    private final AtomicLong reapedFailed = new AtomicLong();
    private final AtomicLong storeErrors = new AtomicLong();
    private volatile Map<SlotRange, Long> backlog = Map.of();
    private volatile Map<String, Long> unhandled = Map.of();

    @Override
    public void tasksDone(String type, int count) {
        done.addAndGet(count);
    }

    @Override
    public void taskRetried(String type) {
        retried.incrementAndGet();
    }

    @Override
    public void taskFailed(String type) {
        failed.incrementAndGet();
    }

    @Override
    public void handlerTimedOut(String type) {
        timedOut.incrementAndGet();
    }

    @Override
    public void claimConflicts(int count) {
        conflicts.addAndGet(count);
    }

    @Override
    public void settlementsLost(int count) {
        lost.addAndGet(count);
    }

    @Override
    public void leasesReaped(int returned, int failedCount) {
        reapedReturned.addAndGet(returned);
        reapedFailed.addAndGet(failedCount);
    }

    @Override
    public void storeError(String operation) {
        storeErrors.incrementAndGet();
    }

    @Override
    public void backlog(Map<SlotRange, Long> pendingByRange) {
        backlog = Map.copyOf(pendingByRange);
    }

    public long done() {
        return done.get();
    }

    public long retried() {
        return retried.get();
    }

    public long failed() {
        return failed.get();
    }

    public long timedOut() {
        return timedOut.get();
    }

    public long claimConflicts() {
        return conflicts.get();
    }

    public long settlementsLost() {
        return lost.get();
    }

    public long reapedReturned() {
        return reapedReturned.get();
    }

    public long reapedFailed() {
        return reapedFailed.get();
    }

    public long storeErrors() {
        return storeErrors.get();
    }

    public Map<SlotRange, Long> lastBacklog() {
        return backlog;
    }

    @Override
    public void unhandledBacklog(Map<String, Long> pendingByType) {
        unhandled = Map.copyOf(pendingByType);
    }

    public Map<String, Long> lastUnhandled() {
        return unhandled;
    }

    @Override
    public String toString() {
        return "done=" + done + " retried=" + retried + " failed=" + failed + " timedOut=" + timedOut
                + " claimConflicts=" + conflicts + " settlementsLost=" + lost + " reaped=" + reapedReturned + "/"
                + reapedFailed + " storeErrors=" + storeErrors;
    }
}
