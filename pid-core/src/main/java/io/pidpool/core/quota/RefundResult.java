package io.pidpool.core.quota;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;

/**
 * The answer to a refund (a refund): {@link RefundApplied}, {@link RefundDuplicate} (the same
 * refund id was applied before with the same deduction and amount: answers as the first time, changes
 * nothing) or {@link RefundRejected} (nothing changed). Immutable values; equal answers are equal
 * records whichever ledger gave them.
 */
public sealed interface RefundResult
        permits RefundResult.RefundApplied, RefundResult.RefundDuplicate, RefundResult.RefundRejected {
    String pid();

    QuotaMonth month();

    String deductionId();

    String refundId();

    /** Whether the refund is in the ledger: {@link RefundApplied} or {@link RefundDuplicate}. */
    boolean applied();

    /**
     * Refunded now.
     *
     * @param refundedTotal everything refunded against the deduction so far, this refund included
     * @param deductionAmount what the deduction took
     * @param usedAfter the PID's usage in {@code month} right after this refund
     */
    record RefundApplied(
            String pid,
            QuotaMonth month,
            String deductionId,
            String refundId,
            long amount,
            long refundedTotal,
            long deductionAmount,
            long usedAfter)
            implements RefundResult {
        @Override
        public boolean applied() {
            return true;
        }

        /** What may still be refunded against the deduction. */
        public long remainingRefundable() {
            return deductionAmount - refundedTotal;
        }
    }

    /** A retry of a refund applied earlier: answers with the original and refunds nothing. */
    record RefundDuplicate(RefundApplied original) implements RefundResult {
        @Override
        public String pid() {
            return original.pid();
        }

        @Override
        public QuotaMonth month() {
            return original.month();
        }

        @Override
        public String deductionId() {
            return original.deductionId();
        }

        @Override
        public String refundId() {
            return original.refundId();
        }

        @Override
        public boolean applied() {
            return true;
        }
    }

    /**
     * Not refunded; the ledger is unchanged.
     *
     * @param amount what was asked for
     * @param refundedTotal refunded against the deduction so far (0 when the deduction is unknown)
     * @param deductionAmount what the deduction took (0 when unknown)
     */
    record RefundRejected(
            String pid,
            QuotaMonth month,
            String deductionId,
            String refundId,
            long amount,
            Reason reason,
            long refundedTotal,
            long deductionAmount)
            implements RefundResult {
        @Override
        public boolean applied() {
            return false;
        }

        public String message() {
            return switch (reason) {
                case UNKNOWN_DEDUCTION ->
                    String.format(
                            "PID %s has no deduction %s in %s: only a completed deduction can be refunded",
                            pid, deductionId, month);
                case EXCEEDS_DEDUCTION ->
                    String.format(
                            "refund %s of %d against deduction %s of PID %s in %s would bring refunds to %d,"
                                    + " above the %d deducted",
                            refundId, amount, deductionId, pid, month, refundedTotal + amount, deductionAmount);
                case REFUND_ID_CONFLICT ->
                    String.format(
                            "refund id %s of PID %s in %s was already used for another deduction or amount"
                                    + " (asked %d against %s)",
                            refundId, pid, month, amount, deductionId);
            };
        }

        /** This rejection as the exception to throw where a caller cannot take no for an answer. */
        public PidPoolException toException() {
            return new PidPoolException(reason.code(), reason.field(), message());
        }
    }

    /** Why a refund was refused: the refund rules 1, 3 and 4. */
    enum Reason {
        /** Rule 1: only a completed deduction can be refunded; this one is unknown (or was reset). */
        UNKNOWN_DEDUCTION(ErrorCode.NOT_FOUND, "deductionId"),
        /** Rule 3: refunds of one deduction never sum above what it took. */
        EXCEEDS_DEDUCTION(ErrorCode.ILLEGAL_STATE, "amount"),
        /** Rule 4: the refund id was applied before to another deduction or with another amount. */
        REFUND_ID_CONFLICT(ErrorCode.CONFLICT, "refundId");

        private final ErrorCode code;
        private final String field;

        Reason(ErrorCode code, String field) {
            this.code = code;
            this.field = field;
        }

        public ErrorCode code() {
            return code;
        }

        public String field() {
            return field;
        }
    }
}
