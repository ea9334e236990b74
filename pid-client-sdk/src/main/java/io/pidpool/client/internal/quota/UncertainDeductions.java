package io.pidpool.client.internal.quota;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deductions no permit was handed out for, and their voiding: a deduction whose outcome this
 * client never learned (<em>uncertain</em>: Redis did not answer its send), and a granted one whose
 * hold ended while it was in flight. Both are given back by the idempotent refund {@code
 * void.<deductionId>}, which answers "unknown deduction" when the deduction never happened, so each
 * is refunded at most once and a deduction nobody holds a permit for does not eat quota.
 *
 * <p><b>When.</b> An uncertain deduction is voided only once its send has ended, {@code settleDelay}
 * after it was given up <em>and</em> {@code settleDelay} after Redis last came back (so bytes a
 * partition held back reach Redis before their void), on the issuer's background thread ({@link
 * #reconcileIfDue()}) or from {@link #reconcile()}, never on a caller's thread. A granted deduction
 * whose hold ended is voided at once with a send bounded in time ({@link #voidGranted}); if Redis does
 * not answer it, it becomes uncertain like the others.
 *
 * <p><b>Concurrency.</b> Thread-safe: a lock-free queue and counters; {@link #reconcile()} may run on
 * several threads at once (each polls different entries).
 */
final class UncertainDeductions {
    private static final Logger log = LoggerFactory.getLogger(UncertainDeductions.class);

    /** A deduction whose outcome this client never learned. */
    private record Uncertain(
            String pid, QuotaMonth month, String deductionId, long amount, long sinceNanos, Future<?> send) {
        /** Whether the send itself is over (Redisson gave it up or it was answered). */
        boolean sendEnded() {
            return send == null || send.isDone();
        }
    }

    private final RedissonQuotaLedger ledger;
    private final RedisCircuit circuit;
    private final Ticker ticker;
    private final long settleNanos;
    private final int max;
    private final ConcurrentLinkedQueue<Uncertain> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicLong nextReconcileNanos = new AtomicLong(Long.MIN_VALUE);

    UncertainDeductions(
            RedissonQuotaLedger ledger, RedisCircuit circuit, Ticker ticker, Duration settleDelay, int max) {
        this.ledger = ledger;
        this.circuit = circuit;
        this.ticker = ticker;
        this.settleNanos = settleDelay.toNanos();
        this.max = max;
    }

    /** How often the background thread looks for due voids: half the settle delay, within 50..500 ms. */
    long tickNanos() {
        return Math.max(50_000_000L, Math.min(settleNanos / 2, 500_000_000L));
    }

    /** Keeps {@code request} to be voided later ({@code send}: its send, {@code null} if none is running). */
    void remember(DeductRequest request, Future<?> send) {
        if (count.incrementAndGet() > max) {
            count.decrementAndGet();
            log.warn(
                    "more than {} deductions of uncertain outcome: not voiding {} of PID {} ({} commands may stay"
                            + " deducted without a permit)",
                    max,
                    request.deductionId(),
                    request.pid(),
                    request.amount());
            return;
        }
        queue.add(new Uncertain(
                request.pid(), request.month(), request.deductionId(), request.amount(), ticker.read(), send));
    }

    /**
     * Voids a granted deduction no permit is handed out for, with one send Redisson gives up after
     * {@code timeout}; never blocks. The returned future completes (never exceptionally) once the void
     * was answered, or kept for later because the circuit is open or Redis did not answer it.
     */
    CompletableFuture<Void> voidGranted(DeductRequest granted, Duration timeout) {
        if (circuit.isOpen() || timeout.toNanos() < BoundedSend.MIN_SEND_NANOS) {
            remember(granted, null); // voided once Redis is back, never on a caller's thread meanwhile
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<RefundResult> send;
        try {
            send = ledger.refundAsync(
                    granted.pid(),
                    granted.month(),
                    granted.deductionId(),
                    voidId(granted.deductionId()),
                    granted.amount(),
                    timeout);
        } catch (RuntimeException e) {
            remember(granted, null);
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<RefundResult> sent = send;
        return send.handle((result, error) -> {
            if (error == null) {
                circuit.succeeded();
                return null;
            }
            Throwable cause = error.getCause() != null ? error.getCause() : error;
            if (cause instanceof PidPoolException p && p.code() != ErrorCode.UNAVAILABLE) {
                log.warn("voiding deduction {} failed: {}", granted.deductionId(), p.getMessage());
                return null;
            }
            remember(granted, sent);
            circuit.failed(cause);
            return null;
        });
    }

    static String voidId(String deductionId) {
        return PermitIssuer.VOID_PREFIX + deductionId;
    }

    /** The background thread's tick: voids what is due, at most every {@code settleDelay / 2}. */
    void reconcileIfDue() {
        if (count.get() == 0 || circuit.isOpen()) {
            return;
        }
        long now = ticker.read();
        long due = nextReconcileNanos.get();
        if (due != Long.MIN_VALUE && now - due < 0) {
            return;
        }
        if (nextReconcileNanos.compareAndSet(due, now + Math.max(settleNanos, 1_000_000_000L) / 2)) {
            try {
                reconcile();
            } catch (PidPoolException e) {
                log.debug("voiding uncertain deductions failed, will retry: {}", e.getMessage());
            } catch (RuntimeException e) {
                log.warn("voiding uncertain deductions failed, will retry", e);
            }
        }
    }

    /**
     * Voids the deductions that are due; returns how many are still uncertain.
     *
     * @throws PidPoolException {@code UNAVAILABLE} when Redis is still unreachable (they stay queued)
     */
    int reconcile() {
        if (circuit.isOpen() && count.get() > 0) {
            throw circuit.openError();
        }
        long now = ticker.read();
        boolean settledSinceBack = now - circuit.closedAtNanos() >= settleNanos;
        int rounds = count.get();
        for (int i = 0; i < rounds; i++) {
            Uncertain u = queue.poll();
            if (u == null) {
                break;
            }
            if (now - u.sinceNanos() < settleNanos || !settledSinceBack || !u.sendEnded()) {
                queue.add(u);
                continue;
            }
            try {
                RefundResult r =
                        ledger.refund(u.pid(), u.month(), u.deductionId(), voidId(u.deductionId()), u.amount());
                count.decrementAndGet();
                log.info("uncertain deduction {} of PID {} settled: {}", u.deductionId(), u.pid(), describe(r));
            } catch (PidPoolException e) {
                queue.add(u);
                if (e.code() == ErrorCode.UNAVAILABLE) {
                    throw e;
                }
                log.warn("voiding deduction {} failed: {}", u.deductionId(), e.getMessage());
            }
        }
        return count.get();
    }

    /** Deductions whose outcome is not yet known or not yet voided. */
    int count() {
        return count.get();
    }

    private static String describe(RefundResult r) {
        if (r instanceof RefundResult.RefundApplied) {
            return "it had been deducted and is now refunded";
        }
        if (r instanceof RefundResult.RefundDuplicate) {
            return "it was refunded before";
        }
        return "it never happened (" + ((RefundResult.RefundRejected) r).reason() + ")";
    }
}
