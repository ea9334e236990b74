package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.QuotaLedger;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.DeductResult.AlreadyGranted;
import io.pidpool.core.quota.DeductResult.Granted;
import io.pidpool.core.quota.DeductResult.Rejected;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;
import io.pidpool.core.quota.RefundResult.RefundApplied;
import io.pidpool.core.quota.RefundResult.RefundDuplicate;
import io.pidpool.core.quota.RefundResult.RefundRejected;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link QuotaLedger} promises: exact limits under concurrency, the four refund
 * rules, idempotent ids, and answers equal to the {@link MonthLedger} reference model. Run by the
 * in-memory fake in pid-core and by the Redis adapter in pid-server.
 *
 * <p>Each test uses PIDs with a random suffix, so suites may share one Redis.
 */
public abstract class QuotaLedgerContract {
    protected static final QuotaMonth NOV = QuotaMonth.parse("2026-11");
    protected static final QuotaMonth DEC = QuotaMonth.parse("2026-12");
    private static final int THREADS = 4;
    private static final long WAIT_SECONDS = 60;

    /** A fresh ledger for one test. */
    protected abstract QuotaLedger createLedger();

    /** Releases what {@link #createLedger} made; by default nothing. */
    protected void closeLedger(QuotaLedger ledger) {}

    protected QuotaLedger ledger;
    private final String run = UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void openLedger() {
        ledger = createLedger();
    }

    @AfterEach
    void dropLedger() {
        closeLedger(ledger);
    }

    /** A PID name unique to this test run. */
    protected String pid(String name) {
        return name + "-" + run;
    }

    @Test
    void grantsUpToTheLimitExactlyThenRejectsWithoutChange() {
        String p = pid("p");
        ledger.setLimit(p, 10);

        DeductResult first = ledger.tryDeduct(p, NOV, 7, "d1");
        DeductResult second = ledger.tryDeduct(p, NOV, 3, "d2");
        DeductResult third = ledger.tryDeduct(p, NOV, 1, "d3");

        assertThat(first).isEqualTo(new Granted(p, NOV, "d1", 7, 7, 10));
        assertThat(second).isEqualTo(new Granted(p, NOV, "d2", 3, 10, 10));
        assertThat(((Granted) second).remainingAfter()).isZero();
        assertThat(third).isEqualTo(new Rejected(p, NOV, "d3", 1, DeductResult.Reason.QUOTA_EXHAUSTED, 10, 10));
        assertThat(third.granted()).isFalse();
        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 10, 10));
        assertThat(ledger.remaining(p, NOV)).isZero();
    }

    @Test
    void aRejectedDeductionLeavesNoTraceAndMayBeRetriedLater() {
        String p = pid("p");
        ledger.setLimit(p, 5);
        assertThat(ledger.tryDeduct(p, NOV, 6, "d1").granted()).isFalse();

        ledger.setLimit(p, 6);

        assertThat(ledger.tryDeduct(p, NOV, 6, "d1")).isEqualTo(new Granted(p, NOV, "d1", 6, 6, 6));
    }

    @Test
    void aPidWithoutALimitGetsNothing() {
        String p = pid("unprovisioned");

        DeductResult r = ledger.tryDeduct(p, NOV, 1, "d1");

        assertThat(r).isEqualTo(new Rejected(p, NOV, "d1", 1, DeductResult.Reason.QUOTA_EXHAUSTED, 0, 0));
        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 0, 0));
    }

    @Test
    void aRetriedDeductionIsGrantedOnceAndAnswersAsTheFirstTime() {
        String p = pid("p");
        ledger.setLimit(p, 100);
        DeductResult first = ledger.tryDeduct(p, NOV, 5, "d1");
        ledger.tryDeduct(p, NOV, 20, "d2");

        DeductResult retry = ledger.tryDeduct(p, NOV, 5, "d1");

        assertThat(retry).isEqualTo(new AlreadyGranted((Granted) first));
        assertThat(retry.granted()).isTrue();
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(25);
    }

    @Test
    void aDeductionIdReusedWithAnotherAmountIsAConflict() {
        String p = pid("p");
        ledger.setLimit(p, 100);
        ledger.tryDeduct(p, NOV, 5, "d1");

        DeductResult r = ledger.tryDeduct(p, NOV, 6, "d1");

        assertThat(r).isEqualTo(new Rejected(p, NOV, "d1", 6, DeductResult.Reason.DEDUCTION_ID_CONFLICT, 5, 100));
        assertThat(((Rejected) r).toException().code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(5);
    }

    @Test
    void monthsAreSeparateWindowsUnderOneLimit() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 10, "d1");

        DeductResult december = ledger.tryDeduct(p, DEC, 10, "d1");

        assertThat(december).isEqualTo(new Granted(p, DEC, "d1", 10, 10, 10));
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(10);
        assertThat(ledger.usage(p, DEC).used()).isEqualTo(10);
        assertThat(ledger.usage(p, QuotaMonth.parse("2027-01"))).isEqualTo(new QuotaUsage(p, DEC.next(), 0, 10));
    }

    @Test
    void pidsAreSeparate() {
        String a = pid("a");
        String b = pid("b");
        ledger.setLimit(a, 3);
        ledger.setLimit(b, 5);

        ledger.tryDeduct(a, NOV, 3, "d1");

        assertThat(ledger.tryDeduct(b, NOV, 5, "d1").granted()).isTrue();
        assertThat(ledger.refund(b, NOV, "d1", "r1", 1).applied()).isTrue();
        assertThat(ledger.usage(a, NOV).used()).isEqualTo(3);
    }

    @Test
    void resetZeroesOneMonthKeepsTheLimitAndOnlyThatMonth() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 8, "d1");
        ledger.tryDeduct(p, DEC, 4, "d1");

        ledger.reset(p, NOV);

        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 0, 10));
        assertThat(ledger.usage(p, DEC).used()).isEqualTo(4);
        assertThat(ledger.tryDeduct(p, NOV, 10, "d2")).isEqualTo(new Granted(p, NOV, "d2", 10, 10, 10));
    }

    @Test
    void deduplicationSurvivesAReset() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        Granted first = (Granted) ledger.tryDeduct(p, NOV, 8, "d1");
        RefundApplied early = (RefundApplied) ledger.refund(p, NOV, "d1", "r1", 2);

        ledger.reset(p, NOV);

        // a retried deduction answers its original grant and takes nothing
        assertThat(ledger.tryDeduct(p, NOV, 8, "d1")).isEqualTo(new AlreadyGranted(first));
        assertThat(ledger.tryDeduct(p, NOV, 9, "d1")).isInstanceOfSatisfying(Rejected.class, r -> assertThat(r.reason())
                .isEqualTo(DeductResult.Reason.DEDUCTION_ID_CONFLICT));
        assertThat(ledger.usage(p, NOV).used()).isZero();
        // a repeated refund answers its original answer
        assertThat(ledger.refund(p, NOV, "d1", "r1", 2)).isEqualTo(new RefundDuplicate(early));
        assertThat(ledger.refund(p, NOV, "d1", "r1", 3))
                .isInstanceOfSatisfying(RefundRejected.class, r -> assertThat(r.reason())
                        .isEqualTo(RefundResult.Reason.REFUND_ID_CONFLICT));
    }

    @Test
    void aRefundOfADeductionMadeBeforeAResetLeavesTheNewUsageAlone() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 8, "d1");
        ledger.refund(p, NOV, "d1", "r1", 2);
        ledger.reset(p, NOV);
        ledger.tryDeduct(p, NOV, 3, "d2");

        // the reset already gave back everything used before it: the refund is recorded (its
        // deduction's refunded total rises, its id is taken) but the usage after the reset stays
        RefundResult late = ledger.refund(p, NOV, "d1", "r2", 5);
        assertThat(late).isEqualTo(new RefundApplied(p, NOV, "d1", "r2", 5, 7, 8, 3));
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(3);
        // refunds still never sum above the deduction
        assertThat(ledger.refund(p, NOV, "d1", "r3", 2))
                .isInstanceOfSatisfying(RefundRejected.class, r -> assertThat(r.reason())
                        .isEqualTo(RefundResult.Reason.EXCEEDS_DEDUCTION));
        // a deduction made after the reset is refunded as usual, and usage never goes below 0
        assertThat(ledger.refund(p, NOV, "d2", "r4", 3)).isInstanceOf(RefundApplied.class);
        assertThat(ledger.usage(p, NOV).used()).isZero();
        assertThat(ledger.refund(p, NOV, "d1", "r5", 1)).isInstanceOf(RefundApplied.class);
        assertThat(ledger.usage(p, NOV).used()).isZero();
    }

    @Test
    void resettingAMonthWithoutUsageIsHarmless() {
        String p = pid("p");

        ledger.reset(p, NOV);

        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 0, 0));
    }

    @Test
    void loweringTheLimitRefusesFurtherDeductionsButTakesNothingBack() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 8, "d1");

        ledger.setLimit(p, 5);

        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 8, 5));
        assertThat(ledger.remaining(p, NOV)).isZero();
        assertThat(ledger.tryDeduct(p, NOV, 1, "d2").granted()).isFalse();
        assertThat(ledger.refund(p, NOV, "d1", "r1", 4).applied()).isTrue();
        assertThat(ledger.tryDeduct(p, NOV, 1, "d2")).isEqualTo(new Granted(p, NOV, "d2", 1, 5, 5));
    }

    // ---- leader epochs: a deposed leader's limit write changes nothing

    @Test
    void aLimitWriteUnderAnOlderLeaderEpochIsRefusedAndChangesNothing() {
        String p = pid("p");
        ledger.setLimit(p, 100, new Epoch(1)); // leader A
        ledger.setLimit(p, 10, new Epoch(2)); // its successor B lowers the limit
        ledger.tryDeduct(p, NOV, 10, "d1");

        assertThatThrownBy(() -> ledger.setLimit(p, 100, new Epoch(1))) // A's late quota drain
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));

        assertThat(ledger.usage(p, NOV).limit()).isEqualTo(10);
        assertThat(ledger.tryDeduct(p, NOV, 1, "d2").granted()).isFalse();
        ledger.setLimit(p, 20, new Epoch(2)); // the same epoch again is fine
        ledger.setLimit(p, 30, new Epoch(3));
        assertThat(ledger.usage(p, NOV).limit()).isEqualTo(30);
    }

    @Test
    void aNewLeaderFencesEveryLimitBeforeWritingAny() {
        List<String> pids = List.of(pid("a"), pid("b"), pid("c"), pid("d"), pid("e"));
        pids.forEach(p -> ledger.setLimit(p, 100, new Epoch(1)));

        ledger.fenceLimits(new Epoch(2));

        for (String p : pids) {
            assertThatThrownBy(() -> ledger.setLimit(p, 500, new Epoch(1)))
                    .isInstanceOfSatisfying(
                            PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));
            assertThat(ledger.usage(p, NOV).limit()).isEqualTo(100);
        }
        assertThatThrownBy(() -> ledger.fenceLimits(new Epoch(1)))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FENCED));
        ledger.setLimit(pids.get(0), 50, new Epoch(2));
        assertThat(ledger.usage(pids.get(0), NOV).limit()).isEqualTo(50);
    }

    // ---- refund rule 1: only a completed deduction can be refunded

    @Test
    void aRefundNeedsAnExistingDeduction() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");

        RefundResult unknown = ledger.refund(p, NOV, "nope", "r1", 1);
        RefundResult wrongMonth = ledger.refund(p, DEC, "d1", "r2", 1);
        String other = pid("other");
        RefundResult wrongPid = ledger.refund(other, NOV, "d1", "r3", 1);

        assertThat(unknown)
                .isEqualTo(new RefundRejected(p, NOV, "nope", "r1", 1, RefundResult.Reason.UNKNOWN_DEDUCTION, 0, 0));
        assertThat(((RefundRejected) unknown).toException().code()).isEqualTo(ErrorCode.NOT_FOUND);
        assertThat(((RefundRejected) wrongMonth).reason()).isEqualTo(RefundResult.Reason.UNKNOWN_DEDUCTION);
        assertThat(((RefundRejected) wrongPid).reason()).isEqualTo(RefundResult.Reason.UNKNOWN_DEDUCTION);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(5);
        // a rejected refund id stays free for a correct refund
        assertThat(ledger.refund(p, NOV, "d1", "r1", 1).applied()).isTrue();
    }

    // ---- rules 2 and 3: partial refunds may repeat, never summing above the deduction

    @Test
    void partialRefundsMayRepeatUntilTheDeductionIsUsedUp() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");

        RefundResult r1 = ledger.refund(p, NOV, "d1", "r1", 2);
        RefundResult r2 = ledger.refund(p, NOV, "d1", "r2", 2);
        RefundResult tooMuch = ledger.refund(p, NOV, "d1", "r3", 2);
        RefundResult last = ledger.refund(p, NOV, "d1", "r4", 1);

        assertThat(r1).isEqualTo(new RefundApplied(p, NOV, "d1", "r1", 2, 2, 5, 3));
        assertThat(r2).isEqualTo(new RefundApplied(p, NOV, "d1", "r2", 2, 4, 5, 1));
        assertThat(tooMuch)
                .isEqualTo(new RefundRejected(p, NOV, "d1", "r3", 2, RefundResult.Reason.EXCEEDS_DEDUCTION, 4, 5));
        assertThat(((RefundRejected) tooMuch).message()).contains("above the 5 deducted");
        assertThat(last).isEqualTo(new RefundApplied(p, NOV, "d1", "r4", 1, 5, 5, 0));
        assertThat(((RefundApplied) last).remainingRefundable()).isZero();
        assertThat(ledger.usage(p, NOV).used()).isZero();
    }

    @Test
    void aRefundGivesTheCommandsBackForNewDeductions() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 10, "d1");

        ledger.refund(p, NOV, "d1", "r1", 4);

        assertThat(ledger.remaining(p, NOV)).isEqualTo(4);
        assertThat(ledger.tryDeduct(p, NOV, 4, "d2").granted()).isTrue();
        assertThat(ledger.tryDeduct(p, NOV, 1, "d3").granted()).isFalse();
    }

    // ---- rule 4: idempotent by refund id

    @Test
    void aRepeatedRefundIdAnswersAsTheFirstTimeAndChangesNothing() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");
        RefundResult first = ledger.refund(p, NOV, "d1", "r1", 2);
        ledger.refund(p, NOV, "d1", "r2", 1);

        RefundResult again = ledger.refund(p, NOV, "d1", "r1", 2);

        assertThat(again).isEqualTo(new RefundDuplicate((RefundApplied) first));
        assertThat(again.applied()).isTrue();
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(2);
    }

    @Test
    void aRefundIdReusedForAnotherAmountIsAConflict() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");
        ledger.refund(p, NOV, "d1", "r1", 2);

        RefundResult otherAmount = ledger.refund(p, NOV, "d1", "r1", 3);

        assertThat(((RefundRejected) otherAmount).reason()).isEqualTo(RefundResult.Reason.REFUND_ID_CONFLICT);
        PidPoolException e = ((RefundRejected) otherAmount).toException();
        assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT);
        assertThat(e.field()).isEqualTo("refundId");
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(3);
    }

    @Test
    void aRefundIdIsScopedToItsDeduction() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");
        ledger.tryDeduct(p, NOV, 5, "d2");
        RefundApplied first = (RefundApplied) ledger.refund(p, NOV, "d1", "r1", 2);

        RefundResult otherDeduction = ledger.refund(p, NOV, "d2", "r1", 2);

        assertThat(otherDeduction).isEqualTo(new RefundApplied(p, NOV, "d2", "r1", 2, 2, 5, 6));
        assertThat(ledger.refund(p, NOV, "d1", "r1", 2)).isEqualTo(new RefundDuplicate(first));
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(6);
    }

    @Test
    void badInputIsRejectedWithItsFieldAndChangesNothing() {
        String p = pid("p");
        ledger.setLimit(p, 10);
        ledger.tryDeduct(p, NOV, 5, "d1");
        record Case(Runnable call, String field) {}
        List<Case> cases = List.of(
                new Case(() -> ledger.tryDeduct(p, NOV, 0, "d2"), "amount"),
                new Case(() -> ledger.tryDeduct(p, NOV, -1, "d2"), "amount"),
                new Case(() -> ledger.tryDeduct(p, NOV, MonthLedger.MAX_AMOUNT + 1, "d2"), "amount"),
                new Case(() -> ledger.tryDeduct(p, NOV, 1, "bad/id"), "deductionId"),
                new Case(() -> ledger.tryDeduct(p, NOV, 1, null), "deductionId"),
                new Case(() -> ledger.tryDeduct("no such/pid", NOV, 1, "d2"), "pid"),
                new Case(() -> ledger.tryDeduct(p, null, 1, "d2"), "month"),
                new Case(() -> ledger.refund(p, NOV, "d1", "r 1", 1), "refundId"),
                new Case(() -> ledger.refund(p, NOV, "d1", "r1", 0), "amount"),
                new Case(() -> ledger.setLimit(p, -1), "limit"),
                new Case(() -> ledger.setLimit(p, MonthLedger.MAX_AMOUNT + 1), "limit"),
                new Case(() -> ledger.setLimit("", 5), "pid"));
        for (Case c : cases) {
            assertThatThrownBy(c.call()::run)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo(c.field()));
        }
        assertThat(ledger.usage(p, NOV)).isEqualTo(new QuotaUsage(p, NOV, 5, 10));
        assertThat(ledger.refund(p, NOV, "d1", "r1", 5).applied()).isTrue();
    }

    // ---- concurrency

    @Test
    void concurrentDeductionsGrantExactlyTheLimit() throws Exception {
        String p = pid("hot");
        int limit = 1000;
        int perThread = 400;
        ledger.setLimit(p, limit);

        List<List<DeductResult>> results = inParallel(t -> {
            List<DeductResult> mine = new ArrayList<>();
            for (int i = 0; i < perThread; i++) {
                mine.add(ledger.tryDeduct(p, NOV, 1, "t" + t + "-" + i));
            }
            return mine;
        });

        long granted = results.stream()
                .flatMap(List::stream)
                .filter(r -> r instanceof Granted)
                .count();
        long exhausted = results.stream()
                .flatMap(List::stream)
                .filter(r -> r instanceof Rejected rej && rej.reason() == DeductResult.Reason.QUOTA_EXHAUSTED)
                .count();
        assertThat(granted).isEqualTo(limit);
        assertThat(exhausted).isEqualTo((long) THREADS * perThread - limit);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(limit);
        // every grant saw a distinct usage: no two threads read the same "used"
        assertThat(results.stream()
                        .flatMap(List::stream)
                        .filter(r -> r instanceof Granted)
                        .map(r -> ((Granted) r).usedAfter())
                        .distinct()
                        .count())
                .isEqualTo(limit);
    }

    @Test
    void concurrentDeductionsOfMixedSizesNeverPassTheLimit() throws Exception {
        String p = pid("mixed");
        int limit = 997;
        ledger.setLimit(p, limit);

        List<List<DeductResult>> results = inParallel(t -> {
            List<DeductResult> mine = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                mine.add(ledger.tryDeduct(p, NOV, 1 + (i + t) % 7, "t" + t + "-" + i));
            }
            return mine;
        });

        long grantedSum = results.stream()
                .flatMap(List::stream)
                .filter(r -> r instanceof Granted)
                .mapToLong(r -> ((Granted) r).amount())
                .sum();
        assertThat(grantedSum).isEqualTo(ledger.usage(p, NOV).used()).isLessThanOrEqualTo(limit);
        // with amounts down to 1 offered to the end, the last free command was taken
        assertThat(grantedSum).isGreaterThan(limit - 7);
    }

    @Test
    void concurrentRetriesOfOneDeductionDeductOnce() throws Exception {
        String p = pid("retry");
        ledger.setLimit(p, 100);

        List<List<DeductResult>> results = inParallel(t -> {
            List<DeductResult> mine = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                mine.add(ledger.tryDeduct(p, NOV, 7, "same"));
            }
            return mine;
        });

        List<DeductResult> all = results.stream().flatMap(List::stream).toList();
        assertThat(all).filteredOn(r -> r instanceof Granted).hasSize(1);
        assertThat(all).filteredOn(r -> r instanceof AlreadyGranted).hasSize(all.size() - 1);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(7);
    }

    @Test
    void concurrentPartialRefundsNeverSumAboveTheDeduction() throws Exception {
        String p = pid("refunds");
        ledger.setLimit(p, 100);
        ledger.tryDeduct(p, NOV, 100, "big");

        List<List<RefundResult>> results = inParallel(t -> {
            List<RefundResult> mine = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                mine.add(ledger.refund(p, NOV, "big", "t" + t + "-" + i, 3));
            }
            return mine;
        });

        List<RefundResult> all = results.stream().flatMap(List::stream).toList();
        // 80 refunds of 3 offered against 100: exactly 33 fit
        assertThat(all).filteredOn(r -> r instanceof RefundApplied).hasSize(33);
        assertThat(all)
                .filteredOn(
                        r -> r instanceof RefundRejected rej && rej.reason() == RefundResult.Reason.EXCEEDS_DEDUCTION)
                .hasSize(80 - 33);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(1);
    }

    @Test
    void concurrentRetriesOfOneRefundApplyOnce() throws Exception {
        String p = pid("refund-retry");
        ledger.setLimit(p, 100);
        ledger.tryDeduct(p, NOV, 50, "d1");

        List<List<RefundResult>> results = inParallel(t -> {
            List<RefundResult> mine = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                mine.add(ledger.refund(p, NOV, "d1", "once", 20));
            }
            return mine;
        });

        List<RefundResult> all = results.stream().flatMap(List::stream).toList();
        RefundApplied applied = (RefundApplied)
                all.stream().filter(r -> r instanceof RefundApplied).findFirst().orElseThrow();
        assertThat(all).filteredOn(r -> r instanceof RefundApplied).hasSize(1);
        assertThat(all)
                .filteredOn(r -> r instanceof RefundDuplicate)
                .allMatch(r -> ((RefundDuplicate) r).original().equals(applied));
        assertThat(all).filteredOn(r -> r instanceof RefundDuplicate).hasSize(all.size() - 1);
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(30);
    }

    @Test
    void concurrentDeductionsAndRefundsKeepUsageEqualToTheirDifference() throws Exception {
        String p = pid("churn");
        ledger.setLimit(p, 50);

        List<List<Long>> nets = inParallel(t -> {
            long net = 0;
            for (int i = 0; i < 150; i++) {
                String id = "t" + t + "-" + i;
                if (ledger.tryDeduct(p, NOV, 2, id).granted()) {
                    net += 2;
                    if (i % 3 != 0 && ledger.refund(p, NOV, id, "r-" + id, 2).applied()) {
                        net -= 2;
                    }
                }
            }
            return List.of(net);
        });

        long expected =
                nets.stream().flatMap(List::stream).mapToLong(Long::longValue).sum();
        assertThat(ledger.usage(p, NOV).used()).isEqualTo(expected).isLessThanOrEqualTo(50);
    }

    // ---- the reference model

    @Test
    void randomOperationsAnswerExactlyLikeTheReferenceModel() {
        SplittableRandom random = new SplittableRandom(20261101);
        List<String> pids = List.of(pid("m0"), pid("m1"));
        List<QuotaMonth> months = List.of(NOV, DEC);
        Map<String, Long> limits = new HashMap<>();
        Map<String, MonthLedger> models = new HashMap<>();
        for (String p : pids) {
            long limit = random.nextLong(0, 60);
            ledger.setLimit(p, limit);
            limits.put(p, limit);
            for (QuotaMonth m : months) {
                models.put(p + "|" + m, new MonthLedger(p, m));
            }
        }
        for (int step = 0; step < 1500; step++) {
            String p = pids.get(random.nextInt(pids.size()));
            QuotaMonth m = months.get(random.nextInt(months.size()));
            MonthLedger model = models.get(p + "|" + m);
            int op = random.nextInt(100);
            String deductionId = "d" + random.nextInt(12);
            long amount = 1 + random.nextInt(random.nextBoolean() ? 3 : 15);
            if (op < 45) {
                assertThat(ledger.tryDeduct(p, m, amount, deductionId))
                        .as("step %d", step)
                        .isEqualTo(model.deduct(deductionId, amount, limits.get(p)));
            } else if (op < 93) {
                String refundId = "r" + random.nextInt(20);
                assertThat(ledger.refund(p, m, deductionId, refundId, amount))
                        .as("step %d", step)
                        .isEqualTo(model.refund(deductionId, refundId, amount));
            } else if (op < 98) {
                long limit = random.nextLong(0, 60);
                ledger.setLimit(p, limit);
                limits.put(p, limit);
            } else {
                ledger.reset(p, m);
                model.reset();
            }
            assertThat(ledger.usage(p, m)).as("step %d", step).isEqualTo(model.usage(limits.get(p)));
        }
    }

    private <T> List<T> inParallel(ThreadBody<T> body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                int thread = t;
                Callable<T> task = () -> {
                    go.await();
                    return body.run(thread);
                };
                futures.add(pool.submit(task));
            }
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(WAIT_SECONDS, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface ThreadBody<T> {
        T run(int thread) throws Exception;
    }
}
