package io.pidpool.core.singleflight;

import static io.pidpool.core.error.Preconditions.requireNonNull;

/**
 * This participant holds the lock of {@code key} for {@code round} (an id unique to this holding,
 * e.g. the lock node's creation zxid), on the coordination session {@code sessionId}.
 */
public record FlightLease(String key, long round, long sessionId) {
    public FlightLease {
        FlightKeys.requireKey(key);
    }

    /** The outcome of {@link FlightLocks#tryAcquire}. */
    public sealed interface Acquisition permits Acquired, Held {}

    /** The lock is ours. */
    public record Acquired(FlightLease lease) implements Acquisition {
        public Acquired {
            requireNonNull(lease, "lease");
        }
    }

    /** Another participant holds the lock, for {@code round}. */
    public record Held(long round) implements Acquisition {}
}
