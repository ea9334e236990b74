package io.pidpool.worker.task;

/** What one sweep for expired leases did: how many tasks went back to PENDING, how many ended FAILED. */
public record ReapResult(int returned, int failed) {
    public static final ReapResult NONE = new ReapResult(0, 0);
}
