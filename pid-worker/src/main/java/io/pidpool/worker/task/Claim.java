package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;

/**
 * A claim on a batch of tasks: who claims, under which fencing token, and until when.
 *
 * @param owner member id of the claiming worker
 * @param claimId unique non-zero token; every later update of the batch must present it, so a
 *     worker whose lease expired and whose task was claimed again cannot settle it any more
 * @param now the claim time
 * @param leaseUntil when the claim expires
 */
public record Claim(String owner, long claimId, Instant now, Instant leaseUntil) {
    public Claim {
        requireNonNull(owner, "owner");
        requireArgument(claimId != 0, "claimId", "claimId must not be 0");
        requireArgument(leaseUntil.isAfter(now), "leaseUntil", "leaseUntil must be after now");
    }
}
