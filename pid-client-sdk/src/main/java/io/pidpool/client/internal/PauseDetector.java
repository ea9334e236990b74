package io.pidpool.client.internal;

/**
 * Notices that the process (or just the watchdog thread) did not run for longer than a budget: a
 * GC pause, SIGSTOP, a starved machine. It is ticked regularly; a gap between two ticks above the
 * threshold is a stall.
 *
 * <p>Concurrency: not thread-safe; confined to the watchdog thread.
 */
final class PauseDetector {
    private final long thresholdNanos;
    private long lastTick;

    PauseDetector(long thresholdNanos, long now) {
        this.thresholdNanos = thresholdNanos;
        this.lastTick = now;
    }

    /**
     * Records a tick at {@code now}.
     *
     * @return the length of the stall that just ended, or 0 if the gap since the previous tick was
     *     within the threshold
     */
    long tick(long now) {
        long gap = now - lastTick;
        lastTick = now;
        return gap > thresholdNanos ? gap : 0;
    }

    long thresholdNanos() {
        return thresholdNanos;
    }
}
