package io.pidpool.core.port;

/**
 * The answer to a refund. Stored with the refund, so asking again with the same refund returns the
 * very same receipt, whatever happened to the deduction since.
 *
 * @param refundedTotal all refunds of the deduction, this one included, right after it was applied
 * @param deductionAmount the amount of the deduction
 */
public record RefundReceipt(Refund refund, long refundedTotal, long deductionAmount) {
    /** What could still be refunded right after this refund. */
    public long remaining() {
        return deductionAmount - refundedTotal;
    }
}
