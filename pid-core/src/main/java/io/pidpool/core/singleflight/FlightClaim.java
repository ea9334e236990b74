package io.pidpool.core.singleflight;

import static io.pidpool.core.error.Preconditions.requireNonNull;

/**
 * A holder's claim on the result node: the node's version after the holder wrote its {@link
 * FlightRecord.Kind#PENDING} record. Publishing is a write conditional on that version, so a former
 * holder's late result fails once a newer holder has claimed the node.
 */
public record FlightClaim(FlightLease lease, int version) {
    public FlightClaim {
        requireNonNull(lease, "lease");
    }
}
