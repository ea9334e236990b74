package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidRecord;
import java.time.Instant;
import java.time.YearMonth;
import java.util.regex.Pattern;

/**
 * Commands spent on a PID, as the durable ledger records them . {@code id} is the
 * deduction id the SDK handed out with the permit; refunds name it. {@code clientId} and
 * {@code sequence} number the usage events of one client (one SDK incarnation) 1, 2, 3, ... so the
 * ledger can drop duplicates and report gaps ; deductions and refunds of a client share
 * one sequence.
 *
 * @param month the quota month the commands count against, as the quota window decided it
 */
public record Deduction(
        String id, String pidId, String clientId, long sequence, long amount, YearMonth month, Instant occurredAt) {

    /** Deduction and refund ids: 1..64 characters of {@code [A-Za-z0-9_.:@-]}. */
    private static final Pattern EVENT_ID = Pattern.compile("[A-Za-z0-9_.:@\\-]{1,64}");

    public Deduction {
        requireEventId(id, "deductionId");
        Names.requirePidId(pidId, "pidId");
        Names.requireToken(clientId, "clientId");
        requireSequence(sequence);
        requireAmount(amount);
        requireNonNull(month, "month");
        requireArgument(
                month.getYear() >= 2000 && month.getYear() <= 9999,
                "month",
                "month must be within 2000-01..9999-12, was %s",
                month);
        occurredAt = StorageLimits.stored(requireNonNull(occurredAt, "occurredAt"));
    }

    static String requireEventId(String id, String field) {
        requireArgument(id != null, field, "%s is required", field);
        requireArgument(
                EVENT_ID.matcher(id).matches(),
                field,
                "%s must be 1-64 characters of [A-Za-z0-9_.:@-], was '%s'",
                field,
                id);
        return id;
    }

    static void requireSequence(long sequence) {
        requireArgument(sequence >= 1, "sequence", "sequence numbers start at 1, was %d", sequence);
    }

    static void requireAmount(long amount) {
        requireArgument(
                amount >= 1 && amount <= PidRecord.MAX_MONTHLY_QUOTA,
                "amount",
                "amount must be within 1..%d, was %d",
                PidRecord.MAX_MONTHLY_QUOTA,
                amount);
    }
}
