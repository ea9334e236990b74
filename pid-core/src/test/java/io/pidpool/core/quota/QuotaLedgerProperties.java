package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.fake.InMemoryQuotaLedger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Random interleavings of deductions and refunds, with retries and reused ids, against the pure
 * {@link MonthLedger} and the {@link InMemoryQuotaLedger} at once. After every step the invariants of
 * docs/design.md §2 promise 5 must hold, and both must answer alike.
 */
class QuotaLedgerProperties {
    private static final String PID = "p1";
    private static final QuotaMonth NOV = QuotaMonth.parse("2026-11");

    sealed interface Op permits Deduct, Refund, Retry {}

    record Deduct(String deductionId, long amount) implements Op {}

    record Refund(String deductionId, String refundId, long amount) implements Op {}

    /** Send again one of the earlier operations, as a client does after a timeout. */
    record Retry(int back) implements Op {}

    @Provide
    Arbitrary<List<Op>> operations() {
        // small id pools so ids collide: duplicates, conflicts and unknown deductions all happen
        Arbitrary<String> deductionIds = Arbitraries.integers().between(0, 7).map(i -> "d" + i);
        Arbitrary<String> refundIds = Arbitraries.integers().between(0, 11).map(i -> "r" + i);
        Arbitrary<Long> amounts = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.longs().between(1, 4)),
                net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(5, 40)));
        Arbitrary<Op> deduct = Combinators.combine(deductionIds, amounts).as(Deduct::new);
        Arbitrary<Op> refund =
                Combinators.combine(deductionIds, refundIds, amounts).as(Refund::new);
        Arbitrary<Op> retry = Arbitraries.integers().between(1, 5).map(Retry::new);
        return Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(4, deduct),
                        net.jqwik.api.Tuple.of(5, refund),
                        net.jqwik.api.Tuple.of(2, retry))
                .list()
                .ofMaxSize(60);
    }

    @Property(tries = 1000)
    void refundsNeverExceedDeductionsUsageNeverExceedsTheLimitAndDuplicatesAreNoOps(
            @ForAll("operations") List<Op> ops, @ForAll @IntRange(min = 0, max = 60) int limit) {
        MonthLedger model = new MonthLedger(PID, NOV);
        InMemoryQuotaLedger ledger = new InMemoryQuotaLedger();
        ledger.setLimit(PID, limit);
        List<Op> sent = new ArrayList<>();
        // what the ledger must remember: deduction -> amount, refund -> (deduction, amount)
        Map<String, Long> granted = new HashMap<>();
        Map<String, Refund> applied = new HashMap<>();
        // requests that changed the ledger: sending one again must change nothing (a rejected one
        // left no trace and is judged afresh)
        Set<Op> tookEffect = new HashSet<>();

        for (Op planned : ops) {
            Op op = planned instanceof Retry r && !sent.isEmpty()
                    ? sent.get(Math.max(0, sent.size() - r.back()))
                    : planned;
            if (op instanceof Retry) {
                continue;
            }
            sent.add(op);
            MonthLedger.Snapshot before = model.snapshot();
            if (op instanceof Deduct d) {
                DeductResult result = model.deduct(d.deductionId(), d.amount(), limit);
                assertThat(ledger.tryDeduct(PID, NOV, d.amount(), d.deductionId()))
                        .isEqualTo(result);
                Long earlier = granted.get(d.deductionId());
                if (earlier == null) {
                    assertThat(result).isInstanceOfAny(DeductResult.Granted.class, DeductResult.Rejected.class);
                    if (result instanceof DeductResult.Granted) {
                        granted.put(d.deductionId(), d.amount());
                        assertThat(before.used() + d.amount()).isLessThanOrEqualTo(limit);
                    } else {
                        assertThat(before.used() + d.amount()).isGreaterThan(limit);
                    }
                } else if (earlier == d.amount()) {
                    assertThat(result).isInstanceOf(DeductResult.AlreadyGranted.class);
                } else {
                    assertThat(((DeductResult.Rejected) result).reason())
                            .isEqualTo(DeductResult.Reason.DEDUCTION_ID_CONFLICT);
                }
            } else if (op instanceof Refund r) {
                RefundResult result = model.refund(r.deductionId(), r.refundId(), r.amount());
                assertThat(ledger.refund(PID, NOV, r.deductionId(), r.refundId(), r.amount()))
                        .isEqualTo(result);
                // a refund id is scoped to its deduction
                Refund earlier = applied.get(r.deductionId() + ":" + r.refundId());
                if (earlier != null) {
                    assertThat(result)
                            .isInstanceOf(
                                    earlier.equals(r)
                                            ? RefundResult.RefundDuplicate.class
                                            : RefundResult.RefundRejected.class);
                } else if (!granted.containsKey(r.deductionId())) {
                    assertThat(((RefundResult.RefundRejected) result).reason())
                            .isEqualTo(RefundResult.Reason.UNKNOWN_DEDUCTION);
                } else if (result instanceof RefundResult.RefundApplied) {
                    applied.put(r.deductionId() + ":" + r.refundId(), r);
                } else {
                    assertThat(((RefundResult.RefundRejected) result).reason())
                            .isEqualTo(RefundResult.Reason.EXCEEDS_DEDUCTION);
                }
            }
            MonthLedger.Snapshot after = model.snapshot();
            boolean changed = !after.equals(before);
            if (tookEffect.contains(op)) {
                assertThat(changed).as("a duplicate changed the ledger: %s", op).isFalse();
            } else if (changed) {
                tookEffect.add(op);
            }
            assertInvariants(after, limit, granted, applied);
            assertThat(ledger.snapshot(PID, NOV)).isEqualTo(after);
        }
    }

    private static void assertInvariants(
            MonthLedger.Snapshot s, long limit, Map<String, Long> granted, Map<String, Refund> applied) {
        assertThat(s.deducted()).isEqualTo(granted);
        long sumDeducted = 0;
        long sumRefunded = 0;
        for (Map.Entry<String, Long> e : s.deducted().entrySet()) {
            long refunded = s.refunded().get(e.getKey());
            long byRefunds = applied.values().stream()
                    .filter(r -> r.deductionId().equals(e.getKey()))
                    .mapToLong(Refund::amount)
                    .sum();
            assertThat(refunded).isEqualTo(byRefunds).isBetween(0L, e.getValue());
            sumDeducted += e.getValue();
            sumRefunded += refunded;
        }
        assertThat(s.used()).isEqualTo(sumDeducted - sumRefunded).isBetween(0L, limit);
        assertThat(s.refundIds().keySet()).isEqualTo(applied.keySet());
    }
}
