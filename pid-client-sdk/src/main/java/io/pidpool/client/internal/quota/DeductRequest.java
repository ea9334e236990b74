package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;

/**
 * One deduction to run, validated: a valid PID, a month, an amount within {@code 1..}{@link
 * MonthLedger#MAX_AMOUNT} and a deduction id (a {@link Names} token). Bad input throws {@link
 * io.pidpool.core.error.PidPoolException} {@code INVALID_ARGUMENT} naming the field.
 *
 * @param indexed also record {@code deductionId -> pid} in the shard's month index, so the deduction
 *     can later be refunded by its id alone ({@link PermitIssuer} does this for every permit)
 */
public record DeductRequest(String pid, QuotaMonth month, long amount, String deductionId, boolean indexed) {
    public DeductRequest {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        MonthLedger.requireAmount(amount);
        Names.requireToken(deductionId, "deductionId");
    }
}
