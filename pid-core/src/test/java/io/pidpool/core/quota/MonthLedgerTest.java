package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The state machine's own shape: decide changes nothing, replay rebuilds, bad events are refused. */
class MonthLedgerTest {
    private static final QuotaMonth NOV = QuotaMonth.parse("2026-11");

    @Test
    void decidingChangesNothingUntilTheEventIsReplayed() {
        MonthLedger ledger = new MonthLedger("p1", NOV);
        MonthLedger.Snapshot before = ledger.snapshot();

        MonthLedger.Decision<DeductResult> d = ledger.decideDeduct("d1", 5, 10);

        assertThat(ledger.snapshot()).isEqualTo(before);
        assertThat(d.event()).contains(new LedgerEvent.Deducted("d1", 5, 10));
        ledger.replay(d.event().orElseThrow());
        assertThat(ledger.used()).isEqualTo(5);
    }

    @Test
    void replayingTheSameEventsRebuildsTheSameLedger() {
        MonthLedger original = new MonthLedger("p1", NOV);
        List<LedgerEvent> log = new ArrayList<>();
        record Op(boolean deduct, String deductionId, String refundId, long amount) {}
        List<Op> ops = List.of(
                new Op(true, "d1", null, 5),
                new Op(true, "d2", null, 4),
                new Op(false, "d1", "r1", 2),
                new Op(false, "d1", "r1", 2),
                new Op(false, "d2", "r2", 9),
                new Op(true, "d3", null, 4),
                new Op(false, "d3", "r3", 4));
        for (Op op : ops) {
            if (op.deduct()) {
                MonthLedger.Decision<DeductResult> d = original.decideDeduct(op.deductionId(), op.amount(), 10);
                d.event().ifPresent(e -> {
                    log.add(e);
                    original.replay(e);
                });
            } else {
                MonthLedger.Decision<RefundResult> d =
                        original.decideRefund(op.deductionId(), op.refundId(), op.amount());
                d.event().ifPresent(e -> {
                    log.add(e);
                    original.replay(e);
                });
            }
        }

        MonthLedger copy = new MonthLedger("p1", NOV);
        log.forEach(copy::replay);

        assertThat(copy.snapshot()).isEqualTo(original.snapshot());
        assertThat(copy.used()).isEqualTo(7);
        assertThat(copy.refund("d1", "r1", 2)).isEqualTo(original.refund("d1", "r1", 2));
    }

    @Test
    void eventsThatDoNotFitAreRefusedAndChangeNothing() {
        MonthLedger ledger = new MonthLedger("p1", NOV);
        ledger.deduct("d1", 5, 10);
        ledger.refund("d1", "r1", 2);
        MonthLedger.Snapshot before = ledger.snapshot();

        List<LedgerEvent> misfits = List.of(
                new LedgerEvent.Deducted("d1", 1, 10),
                new LedgerEvent.Refunded("nope", "r2", 1),
                new LedgerEvent.Refunded("d1", "r1", 1),
                new LedgerEvent.Refunded("d1", "r2", 4));
        for (LedgerEvent e : misfits) {
            assertThatThrownBy(() -> ledger.replay(e))
                    .as("%s", e)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(x -> assertThat(((PidPoolException) x).code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
        }
        assertThat(ledger.snapshot()).isEqualTo(before);
    }

    @Test
    void rejectionsExplainThemselves() {
        MonthLedger ledger = new MonthLedger("p1", NOV);
        ledger.deduct("d1", 5, 5);

        DeductResult.Rejected full = (DeductResult.Rejected) ledger.deduct("d2", 1, 5);
        RefundResult.RefundRejected unknown = (RefundResult.RefundRejected) ledger.refund("d9", "r1", 1);

        assertThat(full.message()).isEqualTo("PID p1 has used 5 of its limit 5 in 2026-11: 1 more would exceed it");
        assertThat(full.toException().code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
        assertThat(unknown.message())
                .isEqualTo("PID p1 has no deduction d9 in 2026-11: only a completed deduction can be refunded");
        assertThat(unknown.toException().field()).isEqualTo("deductionId");
    }

    @Test
    void aResetZeroesTheUsageAndKeepsTheRecords() {
        MonthLedger ledger = new MonthLedger("p1", NOV);
        ledger.deduct("d1", 5, 10);
        ledger.refund("d1", "r1", 1);

        ledger.reset();

        assertThat(ledger.snapshot())
                .isEqualTo(new MonthLedger.Snapshot(0, Map.of("d1", 5L), Map.of("d1", 1L), Map.of("d1:r1", "d1")));
        assertThat(ledger.refund("d1", "r2", 1).applied()).isTrue();
        assertThat(ledger.used()).isZero();
    }
}
