package io.pidpool.worker.runtime;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Paces a worker's loop: waits between polls, and longer after failures (doubling from the poll
 * interval up to {@link #MAX_ERROR_BACKOFF}), unless woken. A wake-up that arrives while the loop is
 * busy is kept, so the next pause ends at once; many wake-ups count as one.
 *
 * <p>Thread-safe: {@link #wakeUp()} from any thread, {@link #pause} from the loop thread.
 */
final class Pacer {
    static final Duration MAX_ERROR_BACKOFF = Duration.ofSeconds(2);

    private final Duration pollInterval;
    private final Semaphore wake = new Semaphore(0);

    Pacer(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    /** Ends the current (or next) pause. */
    void wakeUp() {
        if (wake.availablePermits() == 0) {
            wake.release();
        }
    }

    /** Waits one poll interval, or until woken. */
    void pauseBetweenPolls() {
        pause(pollInterval);
    }

    /** Waits after the {@code failures}-th failure in a row: the poll interval doubled each time, capped. */
    void pauseAfterFailures(int failures) {
        long factor = 1L << Math.min(failures - 1, 4);
        Duration backoff = pollInterval.multipliedBy(factor);
        pause(backoff.compareTo(MAX_ERROR_BACKOFF) > 0 ? MAX_ERROR_BACKOFF : backoff);
    }

    /** Waits the longest backoff, or until woken (after an unexpected failure). */
    void pauseLongest() {
        pause(MAX_ERROR_BACKOFF);
    }

    private void pause(Duration d) {
        try {
            wake.tryAcquire(d.toNanos(), TimeUnit.NANOSECONDS);
            wake.drainPermits();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
