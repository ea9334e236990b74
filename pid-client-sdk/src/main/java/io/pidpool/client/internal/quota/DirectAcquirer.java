package io.pidpool.client.internal.quota;

import io.pidpool.client.Permit;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The direct mode of {@link PermitIssuer}, the counterpart of {@link PermitBatcher}: an acquire sends
 * its deductions from the caller's thread, one candidate PID after another, each waited for under
 * the acquire's one deadline ({@link BoundedSend}); the first grant whose hold still stands is the
 * permit. Thread-safe: it holds no state of its own.
 */
final class DirectAcquirer {
    /** Logs as the issuer it belongs to: operators set log levels for {@code PermitIssuer}. */
    private static final Logger log = LoggerFactory.getLogger(PermitIssuer.class);

    private final PermitIssuer issuer;
    private final HeldPids held;
    private final Ticker ticker;
    private final RedisCircuit circuit;
    private final UncertainDeductions uncertain;
    private final Duration acquireTimeout;
    private final long acquireTimeoutNanos;

    DirectAcquirer(
            PermitIssuer issuer,
            HeldPids held,
            Ticker ticker,
            RedisCircuit circuit,
            UncertainDeductions uncertain,
            Duration acquireTimeout) {
        this.issuer = issuer;
        this.held = held;
        this.ticker = ticker;
        this.circuit = circuit;
        this.uncertain = uncertain;
        this.acquireTimeout = acquireTimeout;
        this.acquireTimeoutNanos = acquireTimeout.toNanos();
    }

    /** Tries {@code order} in turn for {@code n} commands of {@code month}; empty when none grants. */
    Optional<Permit> acquire(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
        long deadline = Long.MIN_VALUE;
        for (PermitPolicy.Candidate c : order) {
            if (!held.leaseValid()) {
                return Optional.empty();
            }
            DeductRequest request = issuer.request(c.pid(), month, n);
            if (deadline == Long.MIN_VALUE) {
                // the bound is on Redis: the first id may have waited for the worker slot (ZooKeeper)
                deadline = ticker.read() + acquireTimeoutNanos;
            }
            DeductResult result = deductBefore(request, deadline);
            if (result.granted()) {
                return confirm(request, deadline);
            }
            issuer.refused(result);
        }
        return Optional.empty();
    }

    /**
     * Sends {@code request} and waits for its answer until {@code deadline} at the latest
     * ({@link BoundedSend}). No answer: the deduction is uncertain (voided later), the circuit opens,
     * {@code UNAVAILABLE}.
     */
    private DeductResult deductBefore(DeductRequest request, long deadline) {
        BoundedSend.Outcome<DeductResult> sent = BoundedSend.before(
                deadline, ticker, circuit, left -> issuer.ledger().tryDeductAsync(request, left));
        if (sent.answered()) {
            return sent.answer();
        }
        if (sent.sentNothing()) {
            throw PidPoolException.unavailable(
                    "no time left within acquireTimeout " + acquireTimeout + " to ask Redis: no permit granted", null);
        }
        uncertain.remember(request, sent.lastSend());
        circuit.failed(sent.failure());
        throw new PidPoolException(
                ErrorCode.UNAVAILABLE,
                null,
                "Redis did not answer within acquireTimeout " + acquireTimeout + " ("
                        + sent.failure().getMessage() + "): no permit granted",
                sent.failure());
    }

    /**
     * Hands out a granted deduction if the hold still stands; voids it otherwise, waiting
     * for the void until {@code deadline} at the latest (a void not answered by then is kept and
     * voided later).
     */
    private Optional<Permit> confirm(DeductRequest granted, long deadline) {
        Permit permit = issuer.permitIfHeld(granted);
        if (permit != null) {
            return Optional.of(permit);
        }
        long left = deadline - ticker.read();
        try {
            issuer.voidGranted(granted, Duration.ofNanos(Math.max(0, left)))
                    .get(Math.max(0, left), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // the void's own handler keeps it as uncertain when Redis gives it up
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            log.warn(
                    "voiding deduction {} failed: {}",
                    granted.deductionId(),
                    e.getCause().toString());
        }
        return Optional.empty();
    }
}
