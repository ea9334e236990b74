package io.pidpool.core.quota;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;

/**
 * The answer to a deduction: {@link Granted} (now), {@link AlreadyGranted} (the same deduction id
 * and amount were granted before: a retry, nothing deducted again) or {@link Rejected} (nothing
 * changed). Immutable values; equal answers are equal records whichever ledger gave them.
 */
public sealed interface DeductResult permits DeductResult.Granted, DeductResult.AlreadyGranted, DeductResult.Rejected {
    String pid();

    QuotaMonth month();

    String deductionId();

    /** Whether the caller may spend the commands: {@link Granted} or {@link AlreadyGranted}. */
    boolean granted();

    /**
     * Deducted now.
     *
     * @param usedAfter the PID's usage in {@code month} right after this deduction
     * @param limit the hard limit (quota + overage allowance) the deduction was checked against
     */
    record Granted(String pid, QuotaMonth month, String deductionId, long amount, long usedAfter, long limit)
            implements DeductResult {
        @Override
        public boolean granted() {
            return true;
        }

        /** Commands left after this deduction. */
        public long remainingAfter() {
            return Math.max(0, limit - usedAfter);
        }
    }

    /** A retry of a deduction granted earlier: answers with the original grant and deducts nothing. */
    record AlreadyGranted(Granted original) implements DeductResult {
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
        public boolean granted() {
            return true;
        }
    }

    /**
     * Not deducted; the ledger is unchanged.
     *
     * @param amount what was asked for
     * @param used the PID's usage in {@code month} when it was refused
     * @param limit the hard limit then in force
     */
    record Rejected(String pid, QuotaMonth month, String deductionId, long amount, Reason reason, long used, long limit)
            implements DeductResult {
        @Override
        public boolean granted() {
            return false;
        }

        public String message() {
            return switch (reason) {
                case QUOTA_EXHAUSTED ->
                    String.format(
                            "PID %s has used %d of its limit %d in %s: %d more would exceed it",
                            pid, used, limit, month, amount);
                case DEDUCTION_ID_CONFLICT ->
                    String.format(
                            "deduction id %s of PID %s in %s was already granted for a different amount (asked %d)",
                            deductionId, pid, month, amount);
            };
        }

        /** This rejection as the exception to throw where a caller cannot take no for an answer. */
        public PidPoolException toException() {
            return new PidPoolException(reason.code(), reason.field(), message());
        }
    }

    /** Why a deduction was refused. */
    enum Reason {
        /** {@code used + amount > limit} (a PID without a limit has limit 0). */
        QUOTA_EXHAUSTED(ErrorCode.ILLEGAL_STATE, "amount"),
        /** The deduction id was granted before with another amount: the caller reuses ids. */
        DEDUCTION_ID_CONFLICT(ErrorCode.CONFLICT, "deductionId");

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
