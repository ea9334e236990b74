package io.pidpool.core.quota;

/**
 * A change to one PID's month ledger, as {@link MonthLedger} decides it and {@link
 * MonthLedger#replay} applies it. Replaying the same events in the same order rebuilds the same
 * ledger, which is how a copy is rebuilt from a log.
 */
public sealed interface LedgerEvent permits LedgerEvent.Deducted, LedgerEvent.Refunded, LedgerEvent.Reset {
    /** A deduction granted against {@code limit}. */
    record Deducted(String deductionId, long amount, long limit) implements LedgerEvent {}

    /** A refund applied to a deduction. */
    record Refunded(String deductionId, String refundId, long amount) implements LedgerEvent {}

    /** An operator reset: usage back to 0, the month's deductions and refunds forgotten. */
    record Reset() implements LedgerEvent {}
}
