package io.pidpool.core.singleflight;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The per-key lock of the single-flight: at most one holder per key at a time, held for as long as
 * the holder's coordination session lives (an EPHEMERAL node in ZooKeeper).
 *
 * <p>Implementations are thread-safe. Methods may block for one round trip; failures to reach the
 * coordination service are {@link io.pidpool.core.error.PidPoolException}s with {@code UNAVAILABLE}.
 */
public interface FlightLocks {
    /** Takes the lock of {@code key} if it is free; never waits for it. */
    FlightLease.Acquisition tryAcquire(String key);

    /**
     * Completes when the lock of {@code key} taken for {@code round} is gone, or earlier: after
     * {@code atMost}, or when the implementation cannot watch any more (connection lost). The caller
     * looks again after every completion; it never completes exceptionally.
     */
    CompletableFuture<Void> released(String key, long round, Duration atMost);

    /** Gives the lock up, if it is still held by {@code lease}; best effort (it dies with the session). */
    void release(FlightLease lease);
}
