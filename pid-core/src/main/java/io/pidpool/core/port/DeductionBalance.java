package io.pidpool.core.port;

/** A recorded deduction and how much of it has been refunded so far. */
public record DeductionBalance(Deduction deduction, long refundedTotal) {
    /** Commands of this deduction that count as used. */
    public long net() {
        return deduction.amount() - refundedTotal;
    }
}
