package io.pidpool.core.port;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;

/**
 * The shared quota ledger: per PID a hard limit (monthly quota + overage allowance), and per PID and
 * month the usage, the deductions and the refunds, with the rules of {@link MonthLedger} (the
 * four refund rules, idempotent deduction and refund ids). The Redis adapter runs each operation as
 * one Lua script, so every call is atomic against every other call from any process.
 *
 * <p><b>Exactness.</b> For one PID and month, the deductions granted never make usage exceed the
 * limit in force at the time, under any concurrency; refunds against one deduction never sum above
 * it; a retried deduction or refund (same id, same content) changes nothing and answers like the
 * first time. A rejected call changes nothing.
 *
 * <p><b>Limits belong to the PID, usage to the month.</b> {@link #setLimit} is written by the leader
 * when a PID is added or its quota or allowance changes, and applies to every month from then on; a
 * PID without a limit has limit 0, so nothing is granted before the leader has provisioned it. Usage
 * is kept per {@link QuotaMonth}; a new month starts at 0 (the monthly reset) and a refund goes to
 * the month of its deduction, which the caller names (the SDK's permit carries it).
 *
 * <p><b>Fencing.</b> The leader writes limits with its epoch ({@link #setLimit(String, long, Epoch)});
 * the ledger refuses a limit of an epoch older than one it has recorded, so a deposed leader's late
 * write cannot raise a limit its successor lowered. The unfenced {@link #setLimit(String, long)} is for
 * tools and tests.
 *
 * <p><b>Errors.</b> Bad input (invalid PID, id or month, amount outside {@code 1..}{@link
 * MonthLedger#MAX_AMOUNT}) throws {@link io.pidpool.core.error.PidPoolException} {@code
 * INVALID_ARGUMENT} and changes nothing. An unreachable store throws {@code UNAVAILABLE}; the call
 * may or may not have taken effect, and retrying with the same id is safe.
 *
 * <p>Implementations are thread-safe.
 */
public interface QuotaLedger {

    /**
     * Deducts {@code amount} commands from {@code pid}'s {@code month} if {@code used + amount <=
     * limit}.
     *
     * @param deductionId unique per PID and month; a retry with the same id and amount answers {@link
     *     DeductResult.AlreadyGranted}
     */
    DeductResult tryDeduct(String pid, QuotaMonth month, long amount, String deductionId);

    /**
     * Gives back {@code amount} commands of deduction {@code deductionId} made in {@code month}.
     *
     * @param refundId unique per deduction (the same id on another deduction is another refund); a
     *     retry with the same id, deduction and amount answers
     *     {@link RefundResult.RefundDuplicate}
     */
    RefundResult refund(String pid, QuotaMonth month, String deductionId, String refundId, long amount);

    /** Usage and limit of {@code pid} in {@code month}; zeros for a PID the ledger has never seen. */
    QuotaUsage usage(String pid, QuotaMonth month);

    /** Commands {@code pid} may still deduct in {@code month}. */
    default long remaining(String pid, QuotaMonth month) {
        return usage(pid, month).remaining();
    }

    /**
     * Sets {@code pid}'s hard limit (quota + overage allowance), {@code 0..MAX_AMOUNT}. Lowering it
     * below current usage refuses further deductions but takes nothing back.
     */
    void setLimit(String pid, long hardLimit);

    /**
     * {@link #setLimit} by the leader of {@code leaderEpoch}, fenced: refused if a limit write or a
     * {@link #fenceLimits} of a newer leader epoch reached the ledger before (for this PID at least; the
     * Redis adapter keeps the highest epoch per shard), else the epoch is recorded with the limit, in
     * the same atomic step. So a deposed leader cannot write back an old limit its successor changed.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} on {@code epoch} (nothing changes)
     */
    void setLimit(String pid, long hardLimit, Epoch leaderEpoch);

    /**
     * Records {@code leaderEpoch} for every PID, as if a limit of each had been written under it: a new
     * leader calls it when its term starts, before it reads or writes any limit.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} on {@code epoch} if a newer epoch is
     *     recorded
     */
    void fenceLimits(Epoch leaderEpoch);

    /**
     * The operator's RESET_QUOTA: usage of {@code pid} in {@code month} back to 0. The month's
     * deductions and refunds are kept, so their ids still deduplicate; a later refund of a deduction
     * made before the reset is recorded but does not lower the new usage ({@link
     * io.pidpool.core.quota.MonthLedger}). The limit stays.
     */
    void reset(String pid, QuotaMonth month);
}
