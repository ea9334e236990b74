package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.RefundReceipt;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.UsageLedger;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** What every {@link UsageLedger} does (the refund rules, the sequence numbers). */
public abstract class UsageLedgerContract extends RepositoryContract {
    private static final YearMonth JULY = YearMonth.of(2025, 7);
    private static final YearMonth AUGUST = YearMonth.of(2025, 8);
    /** Generous: only a deadlocked or starved store gets near it. */
    private static final long RACE_DEADLINE_SECONDS = 60;

    private UsageLedger ledger() {
        return repos.usage();
    }

    private Deduction deduction(String id, String pid, String client, long seq, long amount) {
        return new Deduction(id, pid, client, seq, amount, JULY, clock.instant());
    }

    private Refund refund(String id, String deductionId, String client, long seq, long amount) {
        return new Refund(id, deductionId, client, seq, amount, clock.instant());
    }

    @Test
    void aDeductionIsRecordedOnceAndItsReplayIsANoOp() {
        var d = deduction("d1", "u1", "sdk-a", 1, 5);

        assertThat(ledger().recordDeduction(d)).isTrue();
        assertThat(ledger().recordDeduction(d)).isFalse();

        assertThat(ledger().findDeduction("d1")).contains(new DeductionBalance(d, 0));
        assertThat(ledger().netUsage("u1", JULY)).isEqualTo(5);
        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 1, 1));
    }

    @Test
    void aDeductionIdWithOtherContentIsAConflictAndChangesNothing() {
        var d = deduction("d1", "u1", "sdk-a", 1, 5);
        ledger().recordDeduction(d);

        expectError(ErrorCode.CONFLICT, "deductionId", () -> ledger().recordDeduction(
                        deduction("d1", "u1", "sdk-a", 1, 6)));
        expectError(ErrorCode.CONFLICT, "deductionId", () -> ledger().recordDeduction(
                        deduction("d1", "u1", "sdk-b", 1, 5)));

        assertThat(ledger().findDeduction("d1")).contains(new DeductionBalance(d, 0));
        assertThat(ledger().progress("sdk-b")).isEmpty();
    }

    @Test
    void aSequenceNumberUsedByAnotherEventIsAConflictAndChangesNothing() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 5));

        expectError(
                ErrorCode.CONFLICT, "sequence", () -> ledger().recordDeduction(deduction("d2", "u1", "sdk-a", 1, 5)));
        expectError(ErrorCode.CONFLICT, "sequence", () -> ledger().recordRefund(refund("r1", "d1", "sdk-a", 1, 2)));

        assertThat(ledger().findDeduction("d2")).isEmpty();
        assertThat(ledger().findDeduction("d1").orElseThrow().refundedTotal()).isZero();
        assertThat(ledger().refundsOf("d1")).isEmpty();
    }

    @Test
    void nonPositiveAmountsNeverReachTheLedger() {
        expectError(ErrorCode.INVALID_ARGUMENT, "amount", () -> deduction("d1", "u1", "sdk-a", 1, 0));
        expectError(ErrorCode.INVALID_ARGUMENT, "amount", () -> refund("r1", "d1", "sdk-a", 1, -3));
        expectError(ErrorCode.INVALID_ARGUMENT, "sequence", () -> deduction("d1", "u1", "sdk-a", 0, 1));

        assertThat(ledger().netUsageByPid(JULY)).isEmpty();
    }

    @Test
    void aDeductionCanBeRefundedPartlyAndRepeatedlyUpToItsAmount() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 5));

        RefundReceipt first = ledger().recordRefund(refund("r1", "d1", "sdk-a", 2, 2));
        RefundReceipt second = ledger().recordRefund(refund("r2", "d1", "sdk-b", 1, 3));

        assertThat(first).isEqualTo(new RefundReceipt(refund("r1", "d1", "sdk-a", 2, 2), 2, 5));
        assertThat(second.refundedTotal()).isEqualTo(5);
        assertThat(second.remaining()).isZero();
        assertThat(ledger().refundsOf("d1")).extracting(Refund::id).containsExactly("r1", "r2");
        assertThat(ledger().netUsage("u1", JULY)).isZero();
    }

    @Test
    void aRefundAboveTheDeductionIsRejectedAndChangesNothing() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 5));
        ledger().recordRefund(refund("r1", "d1", "sdk-a", 2, 4));

        var e = expectError(
                ErrorCode.INVALID_ARGUMENT, "amount", () -> ledger().recordRefund(refund("r2", "d1", "sdk-a", 3, 2)));

        assertThat(e.getMessage()).contains("d1");
        assertThat(ledger().findDeduction("d1").orElseThrow().refundedTotal()).isEqualTo(4);
        assertThat(ledger().refundsOf("d1")).extracting(Refund::id).containsExactly("r1");
        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 2, 2));
        assertThat(ledger().recordRefund(refund("r2", "d1", "sdk-a", 3, 1)).refundedTotal())
                .isEqualTo(5);
    }

    @Test
    void aRefundOfAnUnrecordedDeductionIsNotFound() {
        expectError(
                ErrorCode.NOT_FOUND, "deductionId", () -> ledger().recordRefund(refund("r1", "ghost", "sdk-a", 1, 1)));

        assertThat(ledger().progress("sdk-a")).isEmpty();
    }

    @Test
    void theSameRefundAgainAnswersLikeTheFirstTime() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 10));
        RefundReceipt first = ledger().recordRefund(refund("r1", "d1", "sdk-a", 2, 3));
        ledger().recordRefund(refund("r2", "d1", "sdk-a", 3, 4));

        RefundReceipt again = ledger().recordRefund(refund("r1", "d1", "sdk-a", 2, 3));

        assertThat(again).isEqualTo(first);
        assertThat(ledger().findDeduction("d1").orElseThrow().refundedTotal()).isEqualTo(7);
        assertThat(ledger().refundsOf("d1")).hasSize(2);
    }

    @Test
    void aRefundIdWithOtherContentIsAConflictAndChangesNothing() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 10));
        ledger().recordDeduction(deduction("d2", "u1", "sdk-a", 2, 10));
        ledger().recordRefund(refund("r1", "d1", "sdk-a", 3, 3));

        expectError(ErrorCode.CONFLICT, "refundId", () -> ledger().recordRefund(refund("r1", "d1", "sdk-a", 3, 4)));
        expectError(ErrorCode.CONFLICT, "refundId", () -> ledger().recordRefund(refund("r1", "d1", "sdk-b", 1, 3)));

        assertThat(ledger().findDeduction("d1").orElseThrow().refundedTotal()).isEqualTo(3);
        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 3, 3));
        assertThat(ledger().progress("sdk-b")).isEmpty();
    }

    @Test
    void aRefundIdIsScopedToItsDeduction() {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-a", 1, 10));
        ledger().recordDeduction(deduction("d2", "u2", "sdk-a", 2, 10));
        ledger().recordRefund(refund("r0", "d1", "sdk-a", 3, 3));

        RefundReceipt other = ledger().recordRefund(refund("r0", "d2", "sdk-a", 4, 2));

        assertThat(other).isEqualTo(new RefundReceipt(refund("r0", "d2", "sdk-a", 4, 2), 2, 10));
        assertThat(ledger().recordRefund(refund("r0", "d2", "sdk-a", 4, 2))).isEqualTo(other);
        assertThat(ledger().refundsOf("d1")).extracting(Refund::amount).containsExactly(3L);
        assertThat(ledger().refundsOf("d2")).extracting(Refund::amount).containsExactly(2L);
        assertThat(ledger().netUsage("u1", JULY)).isEqualTo(7);
        assertThat(ledger().netUsage("u2", JULY)).isEqualTo(8);
    }

    @Test
    void netUsageIsSummedPerPidAndMonth() {
        ledger().recordDeduction(deduction("d1", "u1", "c", 1, 5));
        ledger().recordDeduction(deduction("d2", "u1", "c", 2, 7));
        ledger().recordDeduction(deduction("d3", "u2", "c", 3, 1));
        ledger().recordDeduction(new Deduction("d4", "u1", "c", 4, 100, AUGUST, Instant.parse("2025-08-01T00:00:00Z")));
        ledger().recordRefund(refund("r1", "d2", "c", 5, 2));

        assertThat(ledger().netUsage("u1", JULY)).isEqualTo(10);
        assertThat(ledger().netUsage("u1", AUGUST)).isEqualTo(100);
        assertThat(ledger().netUsage("u3", JULY)).isZero();
        assertThat(ledger().netUsageByPid(JULY)).containsExactly(Map.entry("u1", 10L), Map.entry("u2", 1L));
        assertThat(ledger().netUsageByPid(YearMonth.of(2025, 6))).isEmpty();
    }

    @Test
    void missingSequenceNumbersAreReportedPerClient() {
        for (long seq : new long[] {1, 2, 4, 7}) {
            ledger().recordDeduction(deduction("a" + seq, "u1", "sdk-a", seq, 1));
        }
        ledger().recordDeduction(deduction("b5", "u1", "sdk-b", 5, 1));

        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 2, 7));
        assertThat(ledger().missingSequences("sdk-a", 9, 100)).containsExactly(3L, 5L, 6L, 8L, 9L);
        assertThat(ledger().missingSequences("sdk-a", 9, 2)).containsExactly(3L, 5L);
        assertThat(ledger().missingSequences("sdk-a", 2, 100)).isEmpty();
        assertThat(ledger().missingSequences("sdk-b", 6, 100)).containsExactly(1L, 2L, 3L, 4L, 6L);
        assertThat(ledger().missingSequences("never-seen", 3, 100)).containsExactly(1L, 2L, 3L);

        ledger().recordDeduction(deduction("a3", "u1", "sdk-a", 3, 1));
        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 4, 7));
        ledger().recordRefund(refund("a6", "a3", "sdk-a", 6, 1));
        ledger().recordRefund(refund("a5", "a4", "sdk-a", 5, 1));
        assertThat(ledger().progress("sdk-a")).contains(new SequenceProgress("sdk-a", 7, 7));
        assertThat(ledger().missingSequences("sdk-a", 8, 100)).containsExactly(8L);
    }

    @Test
    void racingPartialRefundsOfOneDeductionNeverExceedIt() throws Exception {
        long amount = 20;
        ledger().recordDeduction(deduction("hot", "u1", "sdk-main", 1, amount));
        int threads = 6;
        int attemptsPerThread = 4; // 24 attempts of 1..3 commands: about twice the deduction

        List<List<long[]>> outcomes = race(threads, t -> {
            var mine = new ArrayList<long[]>();
            for (int i = 0; i < attemptsPerThread; i++) {
                long asked = 1 + (t + i) % 3;
                try {
                    ledger().recordRefund(refund("r-" + t + "-" + i, "hot", "sdk-" + t, i + 1, asked));
                    mine.add(new long[] {asked, 1});
                } catch (PidPoolException e) {
                    assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    mine.add(new long[] {asked, 0});
                }
            }
            return mine;
        });

        long accepted = 0;
        var rejected = new ArrayList<Long>();
        for (List<long[]> mine : outcomes) {
            for (long[] o : mine) {
                if (o[1] == 1) {
                    accepted += o[0];
                } else {
                    rejected.add(o[0]);
                }
            }
        }
        long refunded = ledger().findDeduction("hot").orElseThrow().refundedTotal();
        assertThat(refunded).isEqualTo(accepted).isLessThanOrEqualTo(amount);
        assertThat(rejected).isNotEmpty();
        // totals only grow, so every rejected refund was too big even for what was left at the end
        assertThat(rejected).allSatisfy(asked -> assertThat(asked).isGreaterThan(amount - refunded));
        assertThat(ledger().refundsOf("hot").stream().mapToLong(Refund::amount).sum())
                .isEqualTo(refunded);
        assertThat(ledger().netUsage("u1", JULY)).isEqualTo(amount - refunded);
    }

    @Test
    void theSameRefundRacedFromManyThreadsIsAppliedOnce() throws Exception {
        ledger().recordDeduction(deduction("d1", "u1", "sdk-main", 1, 10));
        var same = refund("r-once", "d1", "sdk-retry", 1, 4);

        List<RefundReceipt> receipts = race(5, t -> ledger().recordRefund(same));

        assertThat(receipts).containsOnly(new RefundReceipt(same, 4, 10));
        assertThat(ledger().findDeduction("d1").orElseThrow().refundedTotal()).isEqualTo(4);
        assertThat(ledger().refundsOf("d1")).containsExactly(same);
    }

    private interface Racer<T> {
        T run(int thread) throws Exception;
    }

    /** Runs {@code racer} on {@code threads} threads released together; returns their results. */
    private static <T> List<T> race(int threads, Racer<T> racer) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            var start = new CountDownLatch(1);
            var futures = new ArrayList<Future<T>>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit(() -> {
                    start.await();
                    return racer.run(thread);
                }));
            }
            start.countDown();
            var results = new ArrayList<T>();
            for (Future<T> f : futures) {
                results.add(f.get(RACE_DEADLINE_SECONDS, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(RACE_DEADLINE_SECONDS, TimeUnit.SECONDS);
        }
    }
}
