package io.pidpool.core.port;

import java.time.YearMonth;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The durable usage ledger: every deduction and refund, deduplicated by id, numbered per client so
 * that missing events can be found and asked for again (seeds 002 and 004). Redis decides in real
 * time whether a command may run; this ledger is the record that survives Redis and bills the month.
 *
 * <p>Deductions are not tied to a stored PID: usage that happened on a PID that was deleted since
 * is still recorded. Every method is atomic; concurrent refunds of one deduction are serialised, so
 * their sum never exceeds it. Thread-safe.
 */
public interface UsageLedger {
    /**
     * Records a deduction. Recording the same deduction again (same id, same content) is a no-op.
     *
     * @return true if it was new, false if it was already recorded
     * @throws io.pidpool.core.error.PidPoolException {@code CONFLICT} on {@code deductionId} if the
     *     id was recorded with other content, {@code CONFLICT} on {@code sequence} if the client's
     *     sequence number was used by another event
     */
    boolean recordDeduction(Deduction deduction);

    /**
     * Records a refund of a recorded deduction. The same refund again (same id, same content) changes
     * nothing and returns the receipt of the first time.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code deductionId} if the
     *     deduction is not recorded (yet), {@code INVALID_ARGUMENT} on {@code amount} if the refunds
     *     of the deduction would sum above it, {@code CONFLICT} on {@code refundId} if the id was used
     *     for this deduction with other content (a refund id is unique per deduction), {@code CONFLICT} on {@code sequence} as for deductions
     */
    RefundReceipt recordRefund(Refund refund);

    Optional<DeductionBalance> findDeduction(String deductionId);

    /** The refunds of a deduction in the order they were applied. */
    List<Refund> refundsOf(String deductionId);

    /** Commands used on a PID in a month: its deductions of that month minus their refunds. */
    long netUsage(String pidId, YearMonth month);

    /** {@link #netUsage} of every PID with a deduction in the month, by PID id (sorted). */
    Map<String, Long> netUsageByPid(YearMonth month);

    /** How far the ledger has received a client's events; empty if none arrived. */
    Optional<SequenceProgress> progress(String clientId);

    /**
     * The sequence numbers of {@code clientId} in {@code 1..upTo} that the ledger has not received,
     * ascending, at most {@code limit} of them.
     */
    List<Long> missingSequences(String clientId, long upTo, int limit);
}
