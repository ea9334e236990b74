package io.pidpool.client.internal.quota;

import io.pidpool.client.Permit;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batched mode of {@link PermitIssuer}: concurrent acquires are coalesced into one pipelined
 * round trip — on a single Redis one run of the batch script for all of them ({@link
 * RedissonQuotaLedger#sendDeductAll}).
 *
 * <p><b>Nagle without timers.</b> Callers put their acquire on a lock-free queue and wait on their own
 * future. One flusher thread sends everything queued (up to {@code maxBatch}) as soon as fewer than
 * {@code maxInFlight} batches are on the wire, and otherwise lets acquires accumulate while the
 * previous batch is in flight; so the batch size follows the load, and an acquire on an idle client
 * goes out at once. Nothing on this path waits for a timer: the flusher parks only when it has
 * nothing to send (or the in-flight limit is reached) and is unparked by the next acquire or reply.
 * Replies arrive on a Redisson thread, which answers the plainly granted acquires itself (decoding,
 * lease check, one {@code Permit}: nothing that blocks) and hands the batch back to the flusher for
 * the rest.
 *
 * <p>Acquires refused by their PID go to the next PID of their order in a following batch (at most
 * the order's length, {@code maxAttempts}). A batch Redis did not answer is sent once more with the
 * same deduction ids ("granted before" answers a lost reply); if that fails too, its callers get
 * {@code UNAVAILABLE} and the ids are handed to the issuer as uncertain (voided later).
 *
 * <p><b>Concurrency.</b> The flusher thread owns every dequeued acquire, the retry list and the
 * in-flight count; callers touch only the queue and their own future; Redisson threads touch only the
 * queue of answered batches and, for a granted acquire, its future (which the flusher then leaves
 * alone). The {@code parked} flag and the queues are read and written in opposite orders by the
 * flusher and by the wakers (volatile, Dekker style), so a wake-up is never lost. A
 * caller that stops waiting (timeout, interrupt) completes its future exceptionally; a grant that
 * arrives for it is voided, never lost. *
 * <p><b>One class.</b> The flusher loop, the hand-off from Redisson threads and the callers' side
 * share the queues, the in-flight count and the {@code parked} flag; their ordering is what keeps a
 * wake-up from being lost, so they stay in one file where it can be checked.
 */
final class PermitBatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PermitBatcher.class);
    private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

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

    /** A batch on the wire: its acquires in request order, and how often it was sent. */
    private static final class Sent {
        final List<Pending> pending;
        final List<DeductRequest> requests;
        int attempt;
        DeductBatch batch;
        /** Set on the I/O thread before the hand-off (null if the replies could not be decoded). */
        List<DeductResult> results;
        /** Per acquire: already answered with a permit on the I/O thread. */
        boolean[] settled;

        Sent(List<Pending> pending, List<DeductRequest> requests) {
            this.pending = pending;
            this.requests = requests;
        }
    }

    private final PermitIssuer issuer;
    private final int maxBatch;
    private final int maxInFlight;
    private final int queueCapacity;
    private final long timeoutNanos;
    private final ConcurrentLinkedQueue<Pending> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final ConcurrentLinkedQueue<Sent> answered = new ConcurrentLinkedQueue<>();
    private final Thread flusher;
    private volatile boolean running = true;
    private volatile boolean parked;
    private final LongAdder roundTrips = new LongAdder();
    private final LongAdder attemptsSent = new LongAdder();

    // flusher thread only
    private final ArrayDeque<Pending> retry = new ArrayDeque<>();
    private int inFlight;

    PermitBatcher(
            PermitIssuer issuer,
            int maxBatch,
            int maxInFlight,
            int queueCapacity,
            Duration requestTimeout,
            String name) {
        this.issuer = issuer;
        this.maxBatch = maxBatch;
        this.maxInFlight = maxInFlight;
        this.queueCapacity = queueCapacity;
        this.timeoutNanos = requestTimeout.toNanos();
        this.flusher = new Thread(this::run, "pidpool-permit-batcher-" + name);
        flusher.setDaemon(true);
    }

    void start() {
        flusher.start();
    }

    Optional<Permit> submit(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
        Pending p = offer(n, month, order);
        try {
            return p.result.get(timeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            PidPoolException late = new PidPoolException(
                    ErrorCode.UNAVAILABLE,
                    null,
                    "no answer from Redis within " + Duration.ofNanos(timeoutNanos) + ": no permit granted",
                    e);
            issuer.redisAnswered(false, late); // further callers fail at once until a probe gets an answer
            return abandon(p, late);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return abandon(p, new PidPoolException(ErrorCode.UNAVAILABLE, null, "interrupted while waiting", e));
        } catch (ExecutionException e) {
            throw unwrap(e);
        }
    }

    /** Queues an acquire and returns its future (completed on a Redisson thread or the flusher thread). */
    CompletableFuture<Optional<Permit>> enqueue(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
        try {
            return offer(n, month, order).result;
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.UNAVAILABLE) {
                return CompletableFuture.failedFuture(e);
            }
            throw e;
        }
    }

    private Pending offer(int n, QuotaMonth month, List<PermitPolicy.Candidate> order) {
        if (!running) {
            throw PidPoolException.illegalState("the permit issuer is closed");
        }
        if (queued.incrementAndGet() > queueCapacity) {
            queued.decrementAndGet();
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE, null, "too many acquires waiting for Redis (" + queueCapacity + ")");
        }
        Pending p = new Pending(n, month, order);
        queue.offer(p);
        wake();
        return p;
    }

    /**
     * An acquire was queued: unpark the flusher only if it waits for acquires. While it waits for a
     * reply (in-flight limit reached) the acquire simply accumulates: no wake-up, no context switch
     * per acquire; the reply's wake-up sends it.
     */
    private void wake() {
        if (parked) {
            LockSupport.unpark(flusher);
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

    // ---------------------------------------------------------------- the flusher thread

    private void run() {
        while (running || inFlight > 0) {
            boolean progress = false;
            for (Sent s = answered.poll(); s != null; s = answered.poll()) {
                inFlight--;
                Sent done = s;
                guarded(done.pending, () -> answered(done));
                progress = true;
            }
            while (running && inFlight < maxInFlight && (!retry.isEmpty() || !queue.isEmpty())) {
                List<Pending> batch = take();
                guarded(batch, () -> send(batch));
                progress = true;
            }
            if (!progress) {
                boolean canSend = running && inFlight < maxInFlight;
                // announce "waiting for acquires" before the last look at the queue (Dekker with wake())
                parked = canSend;
                if (answered.isEmpty() && (!canSend || (queue.isEmpty() && retry.isEmpty()))) {
                    LockSupport.parkNanos(this, IDLE_PARK_NANOS);
                }
                parked = false;
            }
        }
        PidPoolException closed = PidPoolException.illegalState("the permit issuer is closed");
        retry.forEach(p -> p.result.completeExceptionally(closed));
        retry.clear();
        for (Pending p; (p = queue.poll()) != null; ) {
            p.result.completeExceptionally(closed);
        }
    }

    /** Retries first, then new acquires, up to {@code maxBatch}. */
    private List<Pending> take() {
        List<Pending> batch = new ArrayList<>(Math.min(maxBatch, retry.size() + queued.get() + 1));
        while (batch.size() < maxBatch && !retry.isEmpty()) {
            batch.add(retry.poll());
        }
        for (Pending p; batch.size() < maxBatch && (p = queue.poll()) != null; ) {
            queued.decrementAndGet();
            batch.add(p);
        }
        return batch;
    }

    /** Sends one deduction per acquire of {@code batch} (its next PID), or answers it at once. */
    private void send(List<Pending> batch) {
        boolean lease = issuer.leaseValid();
        PidPoolException away = issuer.redisAway() ? issuer.redisAwayError() : null;
        List<Pending> sent = new ArrayList<>(batch.size());
        List<DeductRequest> requests = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            if (p.result.isDone()) {
                continue; // the caller gave up before anything was sent for this round
            }
            if (!lease || p.next >= p.order.size()) {
                p.result.complete(Optional.empty());
                continue;
            }
            if (away != null) {
                p.result.completeExceptionally(away); // nothing sent while Redis is known to be away
                continue;
            }
            p.inFlight = issuer.request(p.order.get(p.next).pid(), p.month, p.n);
            requests.add(p.inFlight);
            sent.add(p);
        }
        if (!requests.isEmpty()) {
            transmit(new Sent(sent, requests));
        }
    }

    private void transmit(Sent s) {
        s.attempt++;
        // bounded like the callers' wait: a batch Redis does not answer never blocks the in-flight slots for long
        s.batch = issuer.ledger().sendDeductAll(s.requests, Duration.ofNanos(timeoutNanos));
        inFlight++;
        roundTrips.increment();
        attemptsSent.add(s.requests.size());
        s.results = null;
        s.settled = null;
        s.batch.replies().whenComplete((replies, error) -> {
            if (error == null) {
                issuer.redisAnswered(true, null);
                settleGranted(s);
            }
            answered.offer(s);
            LockSupport.unpark(flusher); // one wake-up per batch, whatever the flusher waits for
        });
    }

    /**
     * On the Redisson thread that received the replies: answers the plainly granted acquires at once
     * (decoding and {@link PermitIssuer#permitIfHeld} are cheap and never block), so their callers do
     * not wait for the flusher to be scheduled. Everything else (refusals, failures, a hold that ended,
     * a caller that gave up) is left to the flusher, which gets the batch right after.
     */
    private void settleGranted(Sent s) {
        List<DeductResult> results;
        try {
            results = s.batch.decode();
        } catch (RuntimeException e) {
            return; // the flusher decodes again and handles the failure
        }
        boolean[] settled = new boolean[results.size()];
        for (int i = 0; i < settled.length; i++) {
            if (results.get(i).granted()) {
                Pending p = s.pending.get(i);
                Permit permit = issuer.permitIfHeld(p.inFlight);
                settled[i] = permit != null && p.result.complete(Optional.of(permit));
            }
        }
        s.settled = settled;
        s.results = results; // published to the flusher by the hand-off queue
    }

    private void answered(Sent s) {
        List<DeductResult> results = s.results;
        boolean[] settled = s.settled;
        if (results != null) {
            for (int i = 0; i < s.pending.size(); i++) {
                if (!settled[i]) {
                    settle(s.pending.get(i), results.get(i));
                }
            }
            return;
        }
        try {
            results = s.batch.decode();
        } catch (PidPoolException e) {
            if (e.code() == ErrorCode.UNAVAILABLE && s.attempt == 1 && running) {
                transmit(s); // same ids: a lost reply answers "granted before"
                return;
            }
            if (e.code() == ErrorCode.UNAVAILABLE) {
                s.requests.forEach(issuer::remember);
                issuer.redisAnswered(false, e);
            }
            throw e;
        }
        for (int i = 0; i < s.pending.size(); i++) {
            settle(s.pending.get(i), results.get(i));
        }
    }

    /** Flusher thread: answers one acquire of an answered batch, or queues it for its next PID. */
    private void settle(Pending p, DeductResult result) {
        if (result.granted()) {
            Permit permit = issuer.permitIfHeld(p.inFlight);
            Duration bound = Duration.ofNanos(timeoutNanos);
            if (permit == null) {
                // the hold ended: the caller learns it once the void was answered (or kept), off this thread
                issuer.voidGranted(p.inFlight, bound).whenComplete((v, e) -> p.result.complete(Optional.empty()));
            } else if (!p.result.complete(Optional.of(permit))) {
                issuer.voidGranted(p.inFlight, bound); // the caller stopped waiting
            }
        } else {
            issuer.refused(result);
            if (++p.next < p.order.size() && !p.result.isDone()) {
                retry.add(p);
            } else {
                p.result.complete(Optional.empty());
            }
        }
    }

    /** Runs {@code work}; if it throws, the acquires of {@code batch} fail with it (the thread goes on). */
    private static void guarded(List<Pending> batch, Runnable work) {
        try {
            work.run();
        } catch (RuntimeException e) {
            PidPoolException failure = e instanceof PidPoolException p
                    ? p
                    : new PidPoolException(ErrorCode.UNAVAILABLE, null, "acquire failed: " + e, e);
            if (!(e instanceof PidPoolException)) {
                log.error("permit batch failed", e);
            }
            batch.forEach(p -> p.result.completeExceptionally(failure));
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
        LockSupport.unpark(flusher);
        try {
            flusher.join(TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
