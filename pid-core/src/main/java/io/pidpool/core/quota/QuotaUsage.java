package io.pidpool.core.quota;

/**
 * One PID's usage in one month as a ledger sees it.
 *
 * @param used commands deducted minus commands refunded
 * @param limit the hard limit (quota + overage allowance); 0 for a PID the ledger has no limit for
 */
public record QuotaUsage(String pid, QuotaMonth month, long used, long limit) {
    /** Commands that may still be deducted; 0 when usage is at or above the limit. */
    public long remaining() {
        return Math.max(0, limit - used);
    }
}
