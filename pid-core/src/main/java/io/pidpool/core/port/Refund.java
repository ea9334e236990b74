package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import java.time.Instant;

/**
 * Commands given back to a recorded deduction (the four refund rules: only after the deduction,
 * possibly several times, never more than the deduction in total, idempotent by refund id).
 * {@code clientId} and {@code sequence} number it in its client's event stream like a
 * {@link Deduction}.
 */
public record Refund(String id, String deductionId, String clientId, long sequence, long amount, Instant occurredAt) {
    public Refund {
        Deduction.requireEventId(id, "refundId");
        Deduction.requireEventId(deductionId, "deductionId");
        Names.requireToken(clientId, "clientId");
        Deduction.requireSequence(sequence);
        Deduction.requireAmount(amount);
        occurredAt = StorageLimits.stored(requireNonNull(occurredAt, "occurredAt"));
    }
}
