package io.pidpool.core.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.quota.DeductResult.AlreadyGranted;
import io.pidpool.core.quota.DeductResult.Granted;
import io.pidpool.core.quota.DeductResult.Rejected;
import io.pidpool.core.quota.RefundResult.RefundApplied;
import io.pidpool.core.quota.RefundResult.RefundDuplicate;
import io.pidpool.core.quota.RefundResult.RefundRejected;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One PID's quota ledger for one month: the deduct/refund state machine with the four refund rules.
 *
 * <ol>
 *   <li><b>Only a completed deduction can be refunded</b>: a refund names an existing deduction id,
 *       else {@link RefundResult.Reason#UNKNOWN_DEDUCTION}.
 *   <li><b>One deduction, many refunds</b>: partial refunds with different refund ids may repeat.
 *   <li><b>Refunds never sum above the deduction</b>: else {@link RefundResult.Reason#EXCEEDS_DEDUCTION}.
 *   <li><b>Refunds are idempotent by refund id</b>: the same refund id with the same deduction and
 *       amount answers {@link RefundDuplicate} with the first answer and changes nothing; with another
 *       amount it is a {@link RefundResult.Reason#REFUND_ID_CONFLICT}. A refund id is unique per
 *       deduction: the same refund id on another deduction is another refund (docs/quota.md §5a).
 * </ol>
 *
 * Deductions are idempotent the same way: a deduction id granted before answers {@link
 * AlreadyGranted} for the same amount and {@link DeductResult.Reason#DEDUCTION_ID_CONFLICT} for
 * another. A deduction is granted only if {@code used + amount <= limit}. A rejected request leaves
 * no trace, so retrying it later is evaluated afresh. {@code used} is always {@code sum(deducted) -
 * sum(refunded)} over the deductions since the latest reset, never negative, and never raised above
 * the limit by a deduction.
 *
 * <p><b>Shape.</b> Kafka-style: {@code decide*} validates and returns a {@link Decision} (the answer
 * plus the {@link LedgerEvent} to apply, if any) without changing anything; only {@link #replay}
 * changes state. {@link #deduct}, {@link #refund} and {@link #reset} do both.
 *
 * <p><b>Resets</b> zero the usage and keep every deduction and refund, so deduplication survives
 * them: a deduction retried after a reset answers its original grant and takes nothing, a refund
 * retried answers its original answer. A refund of a deduction made before the reset is checked and
 * recorded as usual (its refunded total rises, its refund id is taken, refunds still never sum
 * above the deduction) but leaves the usage alone: the reset already gave back everything used
 * before it, so lowering the new usage would grant those commands twice (docs/quota.md §2a).
 *
 * <p>Bad input (an invalid id, an amount outside {@code 1..}{@link #MAX_AMOUNT}) throws {@link
 * PidPoolException} {@code INVALID_ARGUMENT} and changes nothing.
 *
 * <p><b>Concurrency.</b> Not thread-safe: one owner at a time (the in-memory ledger holds a lock per
 * PID around decide + replay; the Redis adapter runs the same rules inside one Lua script).
 */
public final class MonthLedger {
    /** The largest amount or limit: a quota plus an overage allowance, each at most 1e9. */
    public static final long MAX_AMOUNT = 2 * PidRecord.MAX_MONTHLY_QUOTA;

    /** An answer and the event that makes it true ({@code empty} when nothing changes). */
    public record Decision<R>(R result, Optional<LedgerEvent> event) {}

    /** A deduction as recorded; {@code grant} is the answer it got. */
    private static final class Deduction {
        final Granted grant;
        long refunded;
        /** Made before the latest reset: its refunds no longer lower the usage. */
        boolean beforeReset;

        Deduction(Granted grant) {
            this.grant = grant;
        }
    }

    private final String pid;
    private final QuotaMonth month;
    private long used;
    private final Map<String, Deduction> deductions = new LinkedHashMap<>();
    /** By (deduction id, refund id): a refund id is scoped to its deduction. */
    private final Map<RefundKey, RefundApplied> refunds = new HashMap<>();

    private record RefundKey(String deductionId, String refundId) {}

    public MonthLedger(String pid, QuotaMonth month) {
        this.pid = Names.requirePidId(pid, "pid");
        this.month = requireNonNull(month, "month");
    }

    public String pid() {
        return pid;
    }

    public QuotaMonth month() {
        return month;
    }

    public long used() {
        return used;
    }

    public QuotaUsage usage(long limit) {
        return new QuotaUsage(pid, month, used, limit);
    }

    /** Decides a deduction of {@code amount} against {@code limit}; changes nothing. */
    public Decision<DeductResult> decideDeduct(String deductionId, long amount, long limit) {
        requireId(deductionId, "deductionId");
        requireAmount(amount);
        requireLimit(limit);
        Deduction existing = deductions.get(deductionId);
        if (existing != null) {
            if (existing.grant.amount() == amount) {
                return new Decision<>(new AlreadyGranted(existing.grant), Optional.empty());
            }
            return new Decision<>(
                    new Rejected(
                            pid, month, deductionId, amount, DeductResult.Reason.DEDUCTION_ID_CONFLICT, used, limit),
                    Optional.empty());
        }
        if (amount > limit - used) {
            return new Decision<>(
                    new Rejected(pid, month, deductionId, amount, DeductResult.Reason.QUOTA_EXHAUSTED, used, limit),
                    Optional.empty());
        }
        return new Decision<>(
                new Granted(pid, month, deductionId, amount, used + amount, limit),
                Optional.of(new LedgerEvent.Deducted(deductionId, amount, limit)));
    }

    /** Decides a refund of {@code amount} against deduction {@code deductionId}; changes nothing. */
    public Decision<RefundResult> decideRefund(String deductionId, String refundId, long amount) {
        requireId(deductionId, "deductionId");
        requireId(refundId, "refundId");
        requireAmount(amount);
        RefundApplied earlier = refunds.get(new RefundKey(deductionId, refundId));
        if (earlier != null) {
            if (earlier.amount() == amount) {
                return new Decision<>(new RefundDuplicate(earlier), Optional.empty());
            }
            return new Decision<>(
                    rejected(deductionId, refundId, amount, RefundResult.Reason.REFUND_ID_CONFLICT), Optional.empty());
        }
        Deduction deduction = deductions.get(deductionId);
        if (deduction == null) {
            return new Decision<>(
                    rejected(deductionId, refundId, amount, RefundResult.Reason.UNKNOWN_DEDUCTION), Optional.empty());
        }
        if (amount > deduction.grant.amount() - deduction.refunded) {
            return new Decision<>(
                    rejected(deductionId, refundId, amount, RefundResult.Reason.EXCEEDS_DEDUCTION), Optional.empty());
        }
        return new Decision<>(
                new RefundApplied(
                        pid,
                        month,
                        deductionId,
                        refundId,
                        amount,
                        deduction.refunded + amount,
                        deduction.grant.amount(),
                        deduction.beforeReset ? used : used - amount),
                Optional.of(new LedgerEvent.Refunded(deductionId, refundId, amount)));
    }

    /**
     * Applies an event decided by this ledger (or by a copy of it in the same state). Throws {@code
     * ILLEGAL_STATE} for an event that does not fit the current state, and then changes nothing.
     */
    public void replay(LedgerEvent event) {
        requireNonNull(event, "event");
        if (event instanceof LedgerEvent.Deducted d) {
            if (deductions.containsKey(d.deductionId())) {
                throw PidPoolException.illegalState(
                        "deduction %s of PID %s in %s is already in the ledger", d.deductionId(), pid, month);
            }
            long after = used + d.amount();
            deductions.put(
                    d.deductionId(),
                    new Deduction(new Granted(pid, month, d.deductionId(), d.amount(), after, d.limit())));
            used = after;
        } else if (event instanceof LedgerEvent.Refunded r) {
            Deduction deduction = deductions.get(r.deductionId());
            if (deduction == null
                    || refunds.containsKey(new RefundKey(r.deductionId(), r.refundId()))
                    || r.amount() > deduction.grant.amount() - deduction.refunded) {
                throw PidPoolException.illegalState(
                        "refund %s of %d against deduction %s does not fit the ledger of PID %s in %s",
                        r.refundId(), r.amount(), r.deductionId(), pid, month);
            }
            deduction.refunded += r.amount();
            if (!deduction.beforeReset) {
                used -= r.amount();
            }
            refunds.put(
                    new RefundKey(r.deductionId(), r.refundId()),
                    new RefundApplied(
                            pid,
                            month,
                            r.deductionId(),
                            r.refundId(),
                            r.amount(),
                            deduction.refunded,
                            deduction.grant.amount(),
                            used));
        } else if (event instanceof LedgerEvent.Reset) {
            deductions.values().forEach(d -> d.beforeReset = true);
            used = 0;
        } else {
            throw new AssertionError("unknown ledger event " + event);
        }
    }

    /** Decides and applies a deduction. */
    public DeductResult deduct(String deductionId, long amount, long limit) {
        Decision<DeductResult> d = decideDeduct(deductionId, amount, limit);
        d.event().ifPresent(this::replay);
        return d.result();
    }

    /** Decides and applies a refund. */
    public RefundResult refund(String deductionId, String refundId, long amount) {
        Decision<RefundResult> d = decideRefund(deductionId, refundId, amount);
        d.event().ifPresent(this::replay);
        return d.result();
    }

    /** Usage back to 0; the month's deductions and refunds are kept for deduplication. */
    public void reset() {
        replay(new LedgerEvent.Reset());
    }

    /** A copy of the state, for comparison and diagnosis. */
    public Snapshot snapshot() {
        Map<String, Long> deducted = new LinkedHashMap<>();
        Map<String, Long> refunded = new LinkedHashMap<>();
        deductions.forEach((id, d) -> {
            deducted.put(id, d.grant.amount());
            refunded.put(id, d.refunded);
        });
        Map<String, String> refundIds = new HashMap<>();
        refunds.forEach((key, r) -> refundIds.put(key.deductionId() + ":" + key.refundId(), r.deductionId()));
        return new Snapshot(used, Map.copyOf(deducted), Map.copyOf(refunded), Map.copyOf(refundIds));
    }

    /**
     * The ledger's state as values.
     *
     * @param deducted deduction id -> amount deducted
     * @param refunded deduction id -> amount refunded against it so far
     * @param refundIds {@code <deductionId>:<refundId>} -> the deduction it refunded
     */
    public record Snapshot(
            long used, Map<String, Long> deducted, Map<String, Long> refunded, Map<String, String> refundIds) {}

    private RefundRejected rejected(String deductionId, String refundId, long amount, RefundResult.Reason reason) {
        Deduction d = deductions.get(deductionId);
        return new RefundRejected(
                pid,
                month,
                deductionId,
                refundId,
                amount,
                reason,
                d == null ? 0 : d.refunded,
                d == null ? 0 : d.grant.amount());
    }

    private static void requireId(String id, String field) {
        Names.requireToken(id, field);
    }

    /** Throws {@code INVALID_ARGUMENT} about {@code amount} unless it is within {@code 1..MAX_AMOUNT}. */
    public static long requireAmount(long amount) {
        requireArgument(
                amount >= 1 && amount <= MAX_AMOUNT,
                "amount",
                "amount must be within 1..%d, was %d",
                MAX_AMOUNT,
                amount);
        return amount;
    }

    /** Throws {@code INVALID_ARGUMENT} about {@code limit} unless it is within {@code 0..MAX_AMOUNT}. */
    public static long requireLimit(long limit) {
        requireArgument(
                limit >= 0 && limit <= MAX_AMOUNT, "limit", "limit must be within 0..%d, was %d", MAX_AMOUNT, limit);
        return limit;
    }

    @Override
    public String toString() {
        return "MonthLedger[" + pid + ", " + month + ", used=" + used + ", deductions=" + deductions.size() + "]";
    }
}
