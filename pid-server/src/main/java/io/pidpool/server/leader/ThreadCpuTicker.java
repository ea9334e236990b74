package io.pidpool.server.leader;

import io.pidpool.core.port.Ticker;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * The CPU time of the calling thread in nanoseconds: what a piece of work cost its thread, without
 * the time the thread was preempted by other processes or stopped by a GC pause. The leader paces its
 * passes by their cost (see {@code PassRunner}); measured on the wall clock, a pass that a loaded
 * machine or a collection stretched from 5 ms to 400 ms made the leader hold back its next passes and
 * placements for up to a second, although the work itself had not grown.
 *
 * <p>Only differences of reads on the same thread mean anything. Where the JVM cannot measure thread
 * CPU time, {@link #orElse} falls back to the given ticker.
 */
final class ThreadCpuTicker implements Ticker {
    private final ThreadMXBean threads;

    private ThreadCpuTicker(ThreadMXBean threads) {
        this.threads = threads;
    }

    /** The calling thread's CPU clock if the JVM supports it, else {@code fallback}. */
    static Ticker orElse(Ticker fallback) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try {
            if (threads.isCurrentThreadCpuTimeSupported()) {
                if (!threads.isThreadCpuTimeEnabled()) {
                    threads.setThreadCpuTimeEnabled(true);
                }
                if (threads.getCurrentThreadCpuTime() >= 0) {
                    return new ThreadCpuTicker(threads);
                }
            }
        } catch (UnsupportedOperationException | SecurityException e) {
            // fall back
        }
        return fallback;
    }

    @Override
    public long read() {
        return threads.getCurrentThreadCpuTime();
    }
}
