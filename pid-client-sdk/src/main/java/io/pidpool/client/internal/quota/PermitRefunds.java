package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.Permit;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.time.Duration;
import java.util.Optional;

/**
 * A caller's refunds ({@code PidClient.refund}), under the same deadline and circuit as its acquires
 * (docs/design.md §9): a caller waits at most the issuer's {@code acquireTimeout} for both steps
 * (the index lookup and the refund) together, and while the {@link
 * RedisCircuit} is open it gets {@code UNAVAILABLE} at once with nothing sent.
 *
 * <p><b>Unknown outcome.</b> A refund Redis did not answer may or may not have been applied. It is not
 * retried in the background (the caller owns its refund id): the caller gets {@code UNAVAILABLE}
 * saying so and may send the same refund (same deduction, refund id and amount) again; the refund
 * script answers a repeat with the first result, so it is applied at most once. A refund that
 * failed early is repeated once within the deadline on the same grounds ({@link BoundedSend}).
 *
 * <p>Thread-safe: no state of its own.
 */
final class PermitRefunds {
    private final RedissonQuotaLedger ledger;
    private final RedisCircuit circuit;
    private final Ticker ticker;
    private final Duration timeout;

    PermitRefunds(RedissonQuotaLedger ledger, RedisCircuit circuit, Ticker ticker, Duration timeout) {
        this.ledger = ledger;
        this.circuit = circuit;
        this.ticker = ticker;
        this.timeout = timeout;
    }

    /** By deduction id alone: month and shard from the id, the PID from the shard's month index. */
    RefundResult refund(String deductionId, String refundId, int n) {
        DeductionIds.Parsed ref = DeductionIds.parse(deductionId);
        requireUserRefundId(refundId);
        MonthLedger.requireAmount(n);
        failIfAway();
        long deadline = ticker.read() + timeout.toNanos();
        BoundedSend.Outcome<Optional<String>> lookup = BoundedSend.before(
                deadline,
                ticker,
                circuit,
                left -> ledger.pidOfDeductionAsync(ref.shard(), ref.month(), deductionId, left));
        if (!lookup.answered()) {
            throw noAnswer(lookup, "looking up deduction " + deductionId + ": nothing was refunded");
        }
        String pid = lookup.answer()
                .orElseThrow(() -> PidPoolException.notFound(
                        "deductionId", "no permit deduction %s is known in %s", deductionId, ref.month()));
        return send(pid, ref.month(), deductionId, refundId, n, deadline);
    }

    /** Of a permit in hand: one round trip, no index lookup. */
    RefundResult refund(Permit permit, String refundId, int n) {
        requireNonNull(permit, "permit");
        requireUserRefundId(refundId);
        MonthLedger.requireAmount(n);
        failIfAway();
        long deadline = ticker.read() + timeout.toNanos();
        return send(permit.pid(), new QuotaMonth(permit.month()), permit.deductionId(), refundId, n, deadline);
    }

    private RefundResult send(String pid, QuotaMonth month, String deductionId, String refundId, int n, long deadline) {
        BoundedSend.Outcome<RefundResult> refund = BoundedSend.before(
                deadline, ticker, circuit, left -> ledger.refundAsync(pid, month, deductionId, refundId, n, left));
        if (!refund.answered()) {
            throw noAnswer(
                    refund,
                    "refund " + refundId + " of deduction " + deductionId
                            + " may or may not have been applied; retry with the same refund id (applied at most once)");
        }
        return refund.answer();
    }

    private void failIfAway() {
        if (circuit.isOpen()) {
            throw circuit.openError("no refund sent; retry with the same refund id");
        }
    }

    private PidPoolException noAnswer(BoundedSend.Outcome<?> outcome, String consequence) {
        if (outcome.sentNothing()) {
            return PidPoolException.unavailable(
                    "no time left within " + timeout + " to ask Redis: nothing was refunded", null);
        }
        circuit.failed(outcome.failure());
        return new PidPoolException(
                ErrorCode.UNAVAILABLE,
                null,
                "Redis did not answer within refund timeout " + timeout + " ("
                        + outcome.failure().getMessage() + ") " + consequence,
                outcome.failure());
    }

    static void requireUserRefundId(String refundId) {
        Names.requireToken(refundId, "refundId");
        requireArgument(
                !refundId.startsWith(PermitIssuer.VOID_PREFIX),
                "refundId",
                "refund ids starting with '%s' are reserved, was '%s'",
                PermitIssuer.VOID_PREFIX,
                refundId);
    }
}
