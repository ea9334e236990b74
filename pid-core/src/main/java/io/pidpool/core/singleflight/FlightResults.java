package io.pidpool.core.singleflight;

import java.util.Optional;

/**
 * The result node of each key. Only the lock holder writes it, and only while it provably still
 * holds the lock: {@link #claim} and {@link #publish} are conditional writes that also check the
 * holder's lock (a {@code multi} on the holder's own session in ZooKeeper).
 *
 * <p>Implementations are thread-safe. Failures to reach the coordination service are {@link
 * io.pidpool.core.error.PidPoolException}s with {@code UNAVAILABLE} (the outcome of a write is then
 * unknown).
 */
public interface FlightResults {
    /** The record stored for {@code key}, whatever its kind or age; empty if there is none. */
    Optional<FlightRecord> read(String key);

    /**
     * Writes {@code pending} as {@code lease}'s claim, replacing what is there.
     *
     * @return the claim, or empty if {@code lease} is provably no longer the holder (fenced)
     */
    Optional<FlightClaim> claim(FlightLease lease, FlightRecord pending);

    /**
     * Writes {@code record} if {@code claim} still stands: its holder still holds the lock and nobody
     * wrote the node since the claim.
     *
     * @return {@code false} if the write was refused (fenced): a newer holder owns the key
     */
    boolean publish(FlightClaim claim, FlightRecord record);
}
