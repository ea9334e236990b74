package io.pidpool.client.quota;

import io.pidpool.client.Permit;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batched mode of {@link PermitIssuer}: callers queue their acquire and wait; one flusher thread
 * drains up to {@code maxBatch} queued acquires and sends them to Redis as one pipelined round trip
 * ({@link RedissonQuotaLedger#tryDeductAll}). Acquires refused by their first PID go to the next PID
 * in a following round trip, at most {@code maxAttempts} rounds. While a round trip is in flight, new
 * acquires accumulate, so the batch size follows the load without any timer.
 *
 * <p><b>Concurrency.</b> The flusher thread owns every dequeued request; callers only touch their own
 * future. A caller that stops waiting (timeout, interrupt) completes its future exceptionally; a grant
 * that arrives for such a future is voided, never lost.
 */
final class PermitBatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PermitBatcher.class);
    private static final long IDLE_POLL_MILLIS = 200;

    private static final class Pending {
        final int n;
        final QuotaMonth month;
        final List<PermitPolicy.Candidate> order;
        final CompletableFuture<Optional<Permit>> result = new CompletableFuture<>();
        int next;
        DeductRequest inFlight;

        Pending(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
            this.n = n;
            this.month = month;
            this.order = order;
        }
    }

    private final PermitIssuer issuer;
    private final int maxBatch;
    private final BlockingQueue<Pending> queue;
    private final long timeoutNanos;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running = true;
    private final java.util.concurrent.atomic.LongAdder roundTrips = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder attemptsSent = new java.util.concurrent.atomic.LongAdder();

    PermitBatcher(
            PermitIssuer issuer, int maxBatch, int flushers, int queueCapacity, Duration requestTimeout, String name) {
        this.issuer = issuer;
        this.maxBatch = maxBatch;
        this.queue = new ArrayBlockingQueue<>(queueCapacity);
        this.timeoutNanos = requestTimeout.toNanos();
        for (int i = 0; i < flushers; i++) {
            Thread t = new Thread(this::run, "pidpool-permit-batcher-" + name + "-" + i);
            t.setDaemon(true);
            threads.add(t);
        }
    }

    void start() {
        threads.forEach(Thread::start);
    }

    Optional<Permit> submit(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
        Pending p = new Pending(n, month, order);
        if (!running) {
            throw PidPoolException.illegalState("the permit issuer is closed");
        }
        if (!queue.offer(p)) {
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE, null, "too many acquires waiting for Redis (" + queue.size() + ")");
        }
        try {
            return p.result.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return abandon(p, new PidPoolException(ErrorCode.UNAVAILABLE, null, "no answer from Redis in time", e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return abandon(p, new PidPoolException(ErrorCode.UNAVAILABLE, null, "interrupted while waiting", e));
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** Stops waiting for {@code p}; if its answer arrived meanwhile, returns it after all. */
    private static Optional<Permit> abandon(Pending p, PidPoolException why) {
        if (p.result.completeExceptionally(why)) {
            throw why;
        }
        try {
            return p.result.getNow(Optional.empty());
        } catch (RuntimeException e) {
            throw why;
        }
    }

    private static PidPoolException unwrap(ExecutionException e) {
        Throwable cause = e.getCause();
        if (cause instanceof PidPoolException p) {
            return new PidPoolException(p.code(), p.field(), p.getMessage(), p);
        }
        return new PidPoolException(ErrorCode.UNAVAILABLE, null, "acquire failed: " + cause, cause);
    }

    private void run() {
        List<Pending> batch = new ArrayList<>(maxBatch);
        while (running) {
            Pending first;
            try {
                first = queue.poll(IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                continue; // close() interrupts; the loop condition decides
            }
            if (first == null) {
                issuer.reconcileQuietly();
                continue;
            }
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            try {
                process(batch);
            } catch (RuntimeException e) {
                PidPoolException failure = e instanceof PidPoolException p
                        ? p
                        : new PidPoolException(ErrorCode.UNAVAILABLE, null, "acquire failed: " + e, e);
                if (!(e instanceof PidPoolException)) {
                    log.error("permit batch failed", e);
                }
                batch.forEach(p -> p.result.completeExceptionally(failure));
            }
            batch.clear();
        }
        PidPoolException closed = PidPoolException.illegalState("the permit issuer is closed");
        for (Pending p; (p = queue.poll()) != null; ) {
            p.result.completeExceptionally(closed);
        }
    }

    private void process(List<Pending> batch) {
        List<Pending> round = batch;
        for (int attempt = 0; attempt < issuer.maxAttempts() && !round.isEmpty(); attempt++) {
            List<DeductRequest> requests = new ArrayList<>(round.size());
            List<Pending> sent = new ArrayList<>(round.size());
            boolean lease = issuer.leaseValid();
            for (Pending p : round) {
                if (p.result.isDone()) {
                    continue; // the caller gave up before anything was sent for this round
                }
                if (!lease || p.next >= p.order.size()) {
                    p.result.complete(Optional.empty());
                    continue;
                }
                p.inFlight = issuer.request(p.order.get(p.next).pid(), p.month, p.n);
                requests.add(p.inFlight);
                sent.add(p);
            }
            if (requests.isEmpty()) {
                return;
            }
            List<DeductResult> results = deductAll(requests);
            roundTrips.increment();
            attemptsSent.add(requests.size());
            List<Pending> again = new ArrayList<>();
            for (int i = 0; i < sent.size(); i++) {
                Pending p = sent.get(i);
                if (results.get(i).granted()) {
                    Optional<Permit> permit = issuer.confirm(p.inFlight);
                    if (!p.result.complete(permit) && permit.isPresent()) {
                        issuer.voidDeduction(p.inFlight); // the caller stopped waiting
                    }
                } else if (++p.next < p.order.size()) {
                    again.add(p);
                } else {
                    p.result.complete(Optional.empty());
                }
            }
            round = again;
        }
        round.forEach(p -> p.result.complete(Optional.empty()));
    }

    private List<DeductResult> deductAll(List<DeductRequest> requests) {
        RedissonQuotaLedger ledger = issuer.ledger();
        try {
            return ledger.tryDeductAll(requests);
        } catch (PidPoolException first) {
            if (first.code() != ErrorCode.UNAVAILABLE) {
                throw first;
            }
            try {
                return ledger.tryDeductAll(requests); // same ids: a lost reply answers "granted before"
            } catch (PidPoolException second) {
                if (second.code() == ErrorCode.UNAVAILABLE) {
                    requests.forEach(issuer::remember);
                }
                throw second;
            }
        }
    }

    /** Average deductions per round trip so far (for benchmarks and diagnosis). */
    double averageBatch() {
        long trips = roundTrips.sum();
        return trips == 0 ? 0 : (double) attemptsSent.sum() / trips;
    }

    @Override
    public void close() {
        running = false;
        threads.forEach(Thread::interrupt);
        try {
            for (Thread t : threads) {
                t.join(TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
