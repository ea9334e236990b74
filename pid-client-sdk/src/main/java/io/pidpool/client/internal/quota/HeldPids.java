package io.pidpool.client.internal.quota;

import java.util.Set;

/**
 * What a {@link PermitIssuer} asks before every permit: which PIDs this client holds and whether its
 * hold is still provably valid (docs/design.md §6). The SDK implements it over its ZooKeeper session.
 *
 * <p>Both methods are called on every {@code tryAcquire} (and again after the grant), possibly from
 * many threads at once: they must be thread-safe, must not block, and should be cheap (e.g. a volatile
 * immutable snapshot and a comparison of the monotonic clock with a deadline).
 */
public interface HeldPids {
    /** The PIDs held now: after their {@code onAssigned} returned, before their {@code onRevoked} starts. */
    Set<String> heldPids();

    /**
     * Whether the hold is valid now: connected, not SUSPENDED, and the last ZooKeeper reply younger
     * than {@code 2T/3 - margin}. {@code false} stops every grant at once.
     */
    boolean leaseValid();
}
