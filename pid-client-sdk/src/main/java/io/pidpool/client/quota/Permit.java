package io.pidpool.client.quota;

import io.pidpool.core.quota.QuotaMonth;

/**
 * The right to send {@code amount} commands with {@code pid}: deducted atomically in Redis under
 * {@code deductionId} in {@code month}. Refund unused commands with {@link PermitIssuer#refund}; the
 * deduction id alone identifies the PID and month (see {@link DeductionIds}).
 */
public record Permit(String pid, String deductionId, QuotaMonth month, int amount) {}
