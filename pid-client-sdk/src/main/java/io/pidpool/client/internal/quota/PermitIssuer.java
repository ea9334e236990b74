package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.Permit;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grants {@link Permit}s: commands of a held PID, deducted atomically in Redis. This is what {@code
 * PidClient.tryAcquire} and {@code PidClient.refund} run.
 *
 * <p><b>A permit is granted only</b> while {@link HeldPids#leaseValid()} holds and for a PID in {@link
 * HeldPids#heldPids()}, both checked before the deduction is sent <em>and</em> after Redis granted it;
 * if the hold was lost in between, the deduction is voided (refunded under {@code void.<deductionId>})
 * and no permit is returned. The decision is always the deduct script's: the near cache only skips
 * PIDs it <em>clearly</em> knows cannot give {@code n} ({@link QuotaNearCache}).
 *
 * <p><b>Policy.</b> The held PIDs that are not clearly exhausted are ordered by the {@link
 * PermitPolicy} (default {@link PermitPolicy#mostRemainingFirst()}) and tried in order, at most {@code
 * maxAttempts} of them; the first grant wins. Empty when none grants.
 *
 * <p><b>Ids.</b> Every attempt gets a fresh id {@code <yyyyMM>-<shard>-<snowflake>} ({@link
 * DeductionIds}); the deduct script indexes it, so {@link #refund(String, String, int)} finds PID and
 * month from the id alone.
 *
 * <p><b>Failures.</b> A caller never waits longer than {@code acquireTimeout} (default 1 s): each
 * send is bounded by what is left of it, and Redisson gives the send up by itself at that point (no
 * retry of its own, nothing lingers). When Redis fails a send early and time is left, the same
 * deduction (same id) is sent again once: a lost reply then answers "granted before" and the permit
 * is returned. If Redis has not answered by the deadline, the caller gets {@code UNAVAILABLE} and the
 * id is kept as <em>uncertain</em>: it is voided by an idempotent refund (which answers "unknown
 * deduction" if it never happened), so a deduction nobody got a permit for does not eat quota. A void
 * is sent only once the send itself has ended, {@code settleDelay} after it was given up <em>and</em>
 * {@code settleDelay} after Redis last came back (so bytes a partition held back have arrived before
 * their void). Voiding runs on the issuer's background thread (and from {@link #reconcile()}), never
 * on a caller's thread.
 *
 * <p><b>Circuit.</b> A send Redis did not answer opens the {@link RedisCircuit}: from then on every
 * acquire fails at once with {@code UNAVAILABLE} (nothing is sent, nothing deducted) while a
 * background probe asks Redis every {@code probeInterval}; its first answer closes the circuit and
 * permits resume.
 *
 * <p><b>Batched mode</b> ({@link Builder#batching(int)}): concurrent {@code tryAcquire} calls are queued
 * (lock-free) and a single flusher thread sends up to {@code maxBatch} of them as one round trip — on a
 * single Redis one run of the batch script, on Redis Cluster one per shard in one pipelined Redisson
 * batch — as soon as the previous batch is answered ({@link PermitBatcher}: Nagle without timers).
 * Same rules, same answers; fewer round trips.
 *
 * <p><b>Concurrency.</b> Thread-safe. In direct mode every call runs on the caller's thread; in batched
 * mode the batcher thread owns the in-flight requests and callers wait on a future (at most {@code
 * requestTimeout}). Lifecycle: built started; {@link #close()} once (compare-and-set).
 */
public final class PermitIssuer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PermitIssuer.class);

    /** Refund ids with this prefix are reserved for voiding deductions. */
    public static final String VOID_PREFIX = "void.";

    /** How long a caller waits for Redis at most, unless the builder says otherwise. */
    public static final Duration DEFAULT_ACQUIRE_TIMEOUT = Duration.ofSeconds(1);

    private enum State {
        STARTED,
        CLOSED
    }

    /** A deduction whose outcome this client never learned. */
    private record Uncertain(
            String pid,
            QuotaMonth month,
            String deductionId,
            long amount,
            long sinceNanos,
            java.util.concurrent.Future<?> send) {
        /** Whether the send itself is over (Redisson gave it up or it was answered). */
        boolean sendEnded() {
            return send == null || send.isDone();
        }
    }

    /** Below this much time left a deduction is not sent (it could not be answered in time). */
    private static final long MIN_SEND_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(5);

    private final RedissonQuotaLedger ledger;
    private final QuotaNearCache nearCache;
    private final HeldPids held;
    private final LongSupplier ids;
    private final MonthlyWindow window;
    private final Clock clock;
    private final Ticker ticker;
    private final PermitPolicy policy;
    private final int maxAttempts;
    private final long settleNanos;
    private final int maxUncertain;
    private final AtomicReference<State> state = new AtomicReference<>(State.STARTED);
    private final ConcurrentLinkedQueue<Uncertain> uncertain = new ConcurrentLinkedQueue<>();
    private final AtomicInteger uncertainCount = new AtomicInteger();
    private final AtomicLong nextReconcileNanos = new AtomicLong(Long.MIN_VALUE);
    private final PermitBatcher batcher;
    private final MissingLimits missingLimits;
    private final Duration acquireTimeout;
    private final long acquireTimeoutNanos;
    /** Probes (circuit) and voids (uncertain deductions): two threads, so a slow void never delays a probe. */
    private final java.util.concurrent.ScheduledExecutorService background;

    private final RedisCircuit circuit;

    private PermitIssuer(Builder b) {
        this.missingLimits = b.missingLimits;
        this.ledger = requireNonNull(b.ledger, "ledger");
        this.nearCache = ledger.nearCache();
        this.held = requireNonNull(b.held, "held");
        this.ids = requireNonNull(b.ids, "ids");
        this.window = b.window;
        this.clock = b.clock;
        this.ticker = b.ticker;
        this.policy = b.policy;
        this.maxAttempts = b.maxAttempts;
        this.settleNanos = b.settleDelay.toNanos();
        this.maxUncertain = b.maxUncertain;
        this.acquireTimeout = b.acquireTimeout;
        this.acquireTimeoutNanos = b.acquireTimeout.toNanos();
        String name = ledger.clientId();
        java.util.concurrent.ScheduledThreadPoolExecutor pool =
                new java.util.concurrent.ScheduledThreadPoolExecutor(2, r -> {
                    Thread t = new Thread(r, "pidpool-quota-background-" + name);
                    t.setDaemon(true);
                    return t;
                });
        pool.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        this.background = pool;
        Duration probeTimeout = b.probeInterval.multipliedBy(5).compareTo(acquireTimeout) < 0
                ? b.probeInterval.multipliedBy(5)
                : acquireTimeout;
        this.circuit = new RedisCircuit(
                "client " + name, () -> ledger.probeAsync(probeTimeout), background, ticker, b.probeInterval);
        this.batcher = b.maxBatch > 0
                ? new PermitBatcher(
                        this,
                        b.maxBatch,
                        b.maxInFlight,
                        b.queueCapacity,
                        b.requestTimeout != null ? b.requestTimeout : b.acquireTimeout,
                        name)
                : null;
        long tick = Math.max(50_000_000L, Math.min(settleNanos / 2, 500_000_000L));
        background.scheduleWithFixedDelay(this::reconcileIfDue, tick, tick, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A permit for {@code n} commands of a held PID with at least {@code n} left this month, or empty.
     *
     * <p>Waits for Redis at most {@code acquireTimeout} (default 1 s) in all; while Redis is known
     * to be away (the circuit is open) it throws at once, without sending anything. (Taking the first
     * deduction id may wait for this client's worker slot in ZooKeeper, which is held all the time
     * except right after the client lost its ZooKeeper session.)
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} for {@code n} outside {@code 1..}{@link
     *     MonthLedger#MAX_AMOUNT}; {@code UNAVAILABLE} when Redis did not answer within {@code
     *     acquireTimeout} or is known to be away (no permit was granted to the caller; a deduction that
     *     may have happened is voided later); {@code ILLEGAL_STATE} after {@link #close()}
     */
    public Optional<Permit> tryAcquire(int n) {
        MonthLedger.requireAmount(n);
        requireOpen();
        long deadline = Long.MIN_VALUE;
        if (!held.leaseValid()) {
            return Optional.empty();
        }
        if (circuit.isOpen()) {
            throw circuit.openError();
        }
        QuotaMonth month = window.monthOf(clock.instant());
        List<PermitPolicy.Candidate> order = candidates(n, month);
        if (order.isEmpty()) {
            return Optional.empty();
        }
        if (batcher != null) {
            return batcher.submit(n, month, order);
        }
        for (PermitPolicy.Candidate c : order) {
            if (!held.leaseValid()) {
                return Optional.empty();
            }
            DeductRequest request = request(c.pid(), month, n);
            if (deadline == Long.MIN_VALUE) {
                // the bound is on Redis: the first id may have waited for the worker slot (ZooKeeper)
                deadline = ticker.read() + acquireTimeoutNanos;
            }
            DeductResult result = deductBefore(request, deadline);
            if (result.granted()) {
                return confirm(request);
            }
            refused(result);
        }
        return Optional.empty();
    }

    /**
     * {@link #tryAcquire(int)} without parking the calling thread: in batched mode the acquire is queued
     * and the future completes when its batch was answered, so one thread may keep many acquires in
     * flight (the blocking call costs one thread wake-up per permit, which on a busy machine is what
     * limits the batched rate). In direct mode the future is already complete when returned.
     *
     * <p>The future completes on a Redisson I/O thread (granted) or the batcher's thread (the rest):
     * attach only short, non-blocking actions (no synchronous Redis calls), or use
     * the {@code *Async} variants with an executor of your own. Completing or cancelling the future
     * yourself abandons the acquire; a deduction granted for it afterwards is voided, never lost. The
     * exceptions are those of {@link #tryAcquire(int)}, delivered through the future (except bad
     * arguments and a closed issuer, which throw at once).
     */
    public java.util.concurrent.CompletableFuture<Optional<Permit>> tryAcquireAsync(int n) {
        MonthLedger.requireAmount(n);
        requireOpen();
        if (batcher == null) {
            try {
                return java.util.concurrent.CompletableFuture.completedFuture(tryAcquire(n));
            } catch (PidPoolException e) {
                return java.util.concurrent.CompletableFuture.failedFuture(e);
            }
        }
        if (!held.leaseValid()) {
            return java.util.concurrent.CompletableFuture.completedFuture(Optional.empty());
        }
        if (circuit.isOpen()) {
            return java.util.concurrent.CompletableFuture.failedFuture(circuit.openError());
        }
        QuotaMonth month = window.monthOf(clock.instant());
        List<PermitPolicy.Candidate> order = candidates(n, month);
        if (order.isEmpty()) {
            return java.util.concurrent.CompletableFuture.completedFuture(Optional.empty());
        }
        return batcher.enqueue(n, month, order);
    }

    /** The ordered, not-clearly-exhausted held PIDs to try, at most {@code maxAttempts}. */
    List<PermitPolicy.Candidate> candidates(int n, QuotaMonth month) {
        Set<String> pids = held.heldPids();
        if (pids.isEmpty()) {
            return List.of();
        }
        List<PermitPolicy.Candidate> candidates = new ArrayList<>(pids.size());
        for (String pid : pids) {
            OptionalLong left = nearCache.remaining(pid, month);
            if (left.isEmpty()) {
                candidates.add(new PermitPolicy.Candidate(pid, -1));
            } else if (left.getAsLong() >= n) {
                candidates.add(new PermitPolicy.Candidate(pid, left.getAsLong()));
            }
        }
        if (candidates.isEmpty()) {
            return candidates;
        }
        List<PermitPolicy.Candidate> ordered = policy.order(candidates, n);
        return ordered.size() > maxAttempts ? ordered.subList(0, maxAttempts) : ordered;
    }

    DeductRequest request(String pid, QuotaMonth month, int n) {
        String id = DeductionIds.encode(month, ledger.keys().shardOf(pid), ids.getAsLong());
        return new DeductRequest(pid, month, n, id, true);
    }

    /**
     * Sends {@code request} and waits for its answer until {@code deadline} at the latest; a send that
     * failed early is repeated once with the same id if time is left. No answer: the deduction is
     * uncertain (remembered, voided later), the circuit opens, {@code UNAVAILABLE}.
     */
    private DeductResult deductBefore(DeductRequest request, long deadline) {
        PidPoolException failure = null;
        java.util.concurrent.CompletableFuture<DeductResult> send = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            long left = deadline - ticker.read();
            if (left < MIN_SEND_NANOS) {
                break;
            }
            send = ledger.tryDeductAsync(request, Duration.ofNanos(left));
            send.whenComplete((answer, error) -> {
                if (error == null) {
                    circuit.succeeded(); // also a late answer: Redis is back
                }
            });
            try {
                return send.get(left, java.util.concurrent.TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                failure = PidPoolException.unavailable("no answer in time", e);
                break;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = PidPoolException.unavailable("interrupted while waiting for Redis", e);
                break;
            } catch (java.util.concurrent.ExecutionException e) {
                Throwable cause = e.getCause();
                if (!(cause instanceof PidPoolException p)) {
                    throw new PidPoolException(ErrorCode.UNAVAILABLE, null, "deduction failed: " + cause, cause);
                }
                if (p.code() != ErrorCode.UNAVAILABLE) {
                    throw new PidPoolException(p.code(), p.field(), p.getMessage(), p);
                }
                failure = p; // failed early: same id again, if time is left ("granted before" answers a lost reply)
            }
        }
        if (send == null) {
            throw PidPoolException.unavailable(
                    "no time left within acquireTimeout " + acquireTimeout + " to ask Redis: no permit granted", null);
        }
        remember(request, send);
        circuit.failed(failure);
        throw new PidPoolException(
                ErrorCode.UNAVAILABLE,
                null,
                "Redis did not answer within acquireTimeout " + acquireTimeout + " (" + failure.getMessage()
                        + "): no permit granted",
                failure);
    }

    /** Batched mode: a batch Redis answered, or did not (also after its resend). */
    void redisAnswered(boolean answered, Throwable why) {
        if (answered) {
            circuit.succeeded();
        } else {
            circuit.failed(why);
        }
    }

    /** Whether Redis is known to be away (the circuit is open). */
    boolean redisAway() {
        return circuit.isOpen();
    }

    PidPoolException redisAwayError() {
        return circuit.openError();
    }

    /** A refused deduction: a held PID without a limit is reported ({@link MissingLimits}). */
    void refused(DeductResult result) {
        if (missingLimits != null) {
            missingLimits.refused(result);
        }
    }

    /** The permit for a granted deduction if the hold still stands, else {@code null}; never blocks. */
    Permit permitIfHeld(DeductRequest granted) {
        if (held.leaseValid() && held.heldPids().contains(granted.pid())) {
            return new Permit(
                    granted.pid(), granted.deductionId(), granted.month().value(), (int) granted.amount());
        }
        return null;
    }

    /** Hands out a granted deduction if the hold still stands; voids it otherwise. */
    Optional<Permit> confirm(DeductRequest granted) {
        if (held.leaseValid() && held.heldPids().contains(granted.pid())) {
            return Optional.of(new Permit(
                    granted.pid(), granted.deductionId(), granted.month().value(), (int) granted.amount()));
        }
        log.info(
                "hold of PID {} ended while deduction {} was in flight: voiding it",
                granted.pid(),
                granted.deductionId());
        voidDeduction(granted);
        return Optional.empty();
    }

    /** Gives a deduction back because no permit was handed out for it. */
    void voidDeduction(DeductRequest request) {
        if (circuit.isOpen()) {
            remember(request); // voided once Redis is back, never on a caller's thread meanwhile
            return;
        }
        try {
            ledger.refund(
                    request.pid(),
                    request.month(),
                    request.deductionId(),
                    VOID_PREFIX + request.deductionId(),
                    request.amount());
        } catch (PidPoolException e) {
            if (e.code() != ErrorCode.UNAVAILABLE) {
                throw e;
            }
            remember(request);
        }
    }

    void remember(DeductRequest request) {
        remember(request, null);
    }

    private void remember(DeductRequest request, java.util.concurrent.Future<?> send) {
        if (uncertainCount.incrementAndGet() > maxUncertain) {
            uncertainCount.decrementAndGet();
            log.warn(
                    "more than {} deductions of uncertain outcome: not voiding {} of PID {} ({} commands may stay"
                            + " deducted without a permit)",
                    maxUncertain,
                    request.deductionId(),
                    request.pid(),
                    request.amount());
            return;
        }
        uncertain.add(new Uncertain(
                request.pid(), request.month(), request.deductionId(), request.amount(), ticker.read(), send));
    }

    /** The background thread's tick: voids what is due, at most every {@code settleDelay / 2}. */
    private void reconcileIfDue() {
        if (uncertainCount.get() == 0 || circuit.isOpen() || state.get() != State.STARTED) {
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
     * Voids the deductions of uncertain outcome that are due: their send has ended, and {@code
     * settleDelay} has passed since they were given up and since Redis last came back. Returns how
     * many are still uncertain. Safe to call from any thread at any time (the issuer's background
     * thread calls it on its own).
     *
     * @throws PidPoolException {@code UNAVAILABLE} when Redis is still unreachable (they stay queued)
     */
    public int reconcile() {
        if (circuit.isOpen() && uncertainCount.get() > 0) {
            throw circuit.openError();
        }
        long now = ticker.read();
        boolean settledSinceBack = now - circuit.closedAtNanos() >= settleNanos;
        int rounds = uncertainCount.get();
        for (int i = 0; i < rounds; i++) {
            Uncertain u = uncertain.poll();
            if (u == null) {
                break;
            }
            if (now - u.sinceNanos() < settleNanos || !settledSinceBack || !u.sendEnded()) {
                uncertain.add(u);
                continue;
            }
            try {
                RefundResult r =
                        ledger.refund(u.pid(), u.month(), u.deductionId(), VOID_PREFIX + u.deductionId(), u.amount());
                uncertainCount.decrementAndGet();
                log.info("uncertain deduction {} of PID {} settled: {}", u.deductionId(), u.pid(), describe(r));
            } catch (PidPoolException e) {
                uncertain.add(u);
                if (e.code() == ErrorCode.UNAVAILABLE) {
                    throw e;
                }
                log.warn("voiding deduction {} failed: {}", u.deductionId(), e.getMessage());
            }
        }
        return uncertainCount.get();
    }

    /** Deductions whose outcome is not yet known or not yet voided. */
    public int uncertainCount() {
        return uncertainCount.get();
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

    /**
     * Refunds {@code n} commands of a permit by its deduction id alone (the refund rules: partial and repeated
     * refunds allowed, never above the deduction, idempotent by {@code refundId}). Works from any
     * client and after restarts while Redis keeps the month.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} for a malformed id, a refund id starting with
     *     {@value #VOID_PREFIX} or a bad amount; {@code NOT_FOUND} on {@code deductionId} when no such
     *     permit deduction is known; {@code UNAVAILABLE} when Redis does not answer (retry with the
     *     same refund id)
     */
    public RefundResult refund(String deductionId, String refundId, int n) {
        DeductionIds.Parsed ref = DeductionIds.parse(deductionId);
        requireUserRefundId(refundId);
        MonthLedger.requireAmount(n);
        String pid = ledger.pidOfDeduction(ref.shard(), ref.month(), deductionId)
                .orElseThrow(() -> PidPoolException.notFound(
                        "deductionId", "no permit deduction %s is known in %s", deductionId, ref.month()));
        return ledger.refund(pid, ref.month(), deductionId, refundId, n);
    }

    /** Refunds {@code n} commands of {@code permit}: one round trip, no index lookup. */
    public RefundResult refund(Permit permit, String refundId, int n) {
        requireNonNull(permit, "permit");
        requireUserRefundId(refundId);
        return ledger.refund(permit.pid(), new QuotaMonth(permit.month()), permit.deductionId(), refundId, n);
    }

    private static void requireUserRefundId(String refundId) {
        Names.requireToken(refundId, "refundId");
        requireArgument(
                !refundId.startsWith(VOID_PREFIX),
                "refundId",
                "refund ids starting with '%s' are reserved, was '%s'",
                VOID_PREFIX,
                refundId);
    }

    boolean leaseValid() {
        return held.leaseValid();
    }

    RedissonQuotaLedger ledger() {
        return ledger;
    }

    int maxAttempts() {
        return maxAttempts;
    }

    /** Batched mode: average deductions per round trip so far; 0 in direct mode. */
    double averageBatch() {
        return batcher == null ? 0 : batcher.averageBatch();
    }

    private void requireOpen() {
        if (state.get() != State.STARTED) {
            throw PidPoolException.illegalState("the permit issuer is closed");
        }
    }

    /** Stops the batcher (pending callers get {@code UNAVAILABLE}) and tries once more to void uncertain deductions. */
    @Override
    public void close() {
        if (!state.compareAndSet(State.STARTED, State.CLOSED)) {
            return;
        }
        if (batcher != null) {
            batcher.close();
        }
        background.shutdownNow();
        if (uncertainCount.get() > 0) {
            try {
                reconcile();
            } catch (PidPoolException e) {
                log.warn("{} deductions of uncertain outcome left at close: {}", uncertainCount.get(), e.getMessage());
            }
        }
    }

    /** Builds a {@link PermitIssuer}. Not thread-safe; use it on one thread and drop it. */
    public static final class Builder {
        private RedissonQuotaLedger ledger;
        private HeldPids held;
        private LongSupplier ids;
        private MonthlyWindow window = new MonthlyWindow(ZoneOffset.UTC);
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.system();
        private PermitPolicy policy = PermitPolicy.mostRemainingFirst();
        private int maxAttempts = 3;
        private Duration settleDelay = Duration.ofSeconds(5);
        private int maxUncertain = 100_000;
        private int maxBatch;
        private int maxInFlight = 1;
        private int queueCapacity = 10_000;
        private Duration requestTimeout;
        private Duration acquireTimeout = DEFAULT_ACQUIRE_TIMEOUT;
        private Duration probeInterval = Duration.ofMillis(100);
        private MissingLimits missingLimits;

        private Builder() {}

        /** Required. */
        /** Reports held PIDs refused for want of a limit in Redis. Optional (default: not reported). */
        public Builder missingLimits(MissingLimits missingLimits) {
            this.missingLimits = requireNonNull(missingLimits, "missingLimits");
            return this;
        }

        public Builder ledger(RedissonQuotaLedger ledger) {
            this.ledger = requireNonNull(ledger, "ledger");
            return this;
        }

        /** Required: the hold and lease the SDK maintains. */
        public Builder held(HeldPids held) {
            this.held = requireNonNull(held, "held");
            return this;
        }

        /** Required (or {@link #ids(LongSupplier)}): this client's Snowflake generator (its worker id held exclusively). */
        public Builder ids(SnowflakeIds ids) {
            requireNonNull(ids, "ids");
            this.ids = ids::nextId;
            return this;
        }

        /**
         * Required (or {@link #ids(SnowflakeIds)}): a source of Snowflake ids unique in the cluster, e.g.
         * {@code ClusterSnowflakeIds::nextId}. It may throw {@code UNAVAILABLE}; {@code tryAcquire} then
         * throws it before anything is deducted.
         */
        public Builder ids(LongSupplier ids) {
            this.ids = requireNonNull(ids, "ids");
            return this;
        }

        /** The cluster's quota window (zone); default UTC. */
        public Builder window(MonthlyWindow window) {
            this.window = requireNonNull(window, "window");
            return this;
        }

        public Builder clock(Clock clock) {
            this.clock = requireNonNull(clock, "clock");
            return this;
        }

        public Builder ticker(Ticker ticker) {
            this.ticker = requireNonNull(ticker, "ticker");
            return this;
        }

        public Builder policy(PermitPolicy policy) {
            this.policy = requireNonNull(policy, "policy");
            return this;
        }

        /** PIDs tried per acquire (1..100); default 3. */
        public Builder maxAttempts(int maxAttempts) {
            requireArgument(
                    maxAttempts >= 1 && maxAttempts <= 100,
                    "maxAttempts",
                    "must be within 1..100, was %d",
                    maxAttempts);
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** How long a deduction of unknown outcome waits before it is voided; default 5 s. */
        public Builder settleDelay(Duration settleDelay) {
            requireNonNull(settleDelay, "settleDelay");
            requireArgument(!settleDelay.isNegative(), "settleDelay", "must be >= 0");
            this.settleDelay = settleDelay;
            return this;
        }

        /** Enables batched mode with up to {@code maxBatch} (1..1000) acquires per round trip. */
        public Builder batching(int maxBatch) {
            requireArgument(maxBatch >= 1 && maxBatch <= 1000, "maxBatch", "must be within 1..1000, was %d", maxBatch);
            this.maxBatch = maxBatch;
            return this;
        }

        /**
         * Batched mode: how many batches may be on the wire at once (1..16); default 1, i.e. Nagle:
         * while one batch is in flight the next one accumulates. One flusher thread sends them all. With
         * many acquires outstanding ({@code tryAcquireAsync}) 2–3 keep Redis busier (docs/benchmarks-quota.md).
         */
        public Builder maxInFlight(int batches) {
            requireArgument(batches >= 1 && batches <= 16, "maxInFlight", "must be within 1..16, was %d", batches);
            this.maxInFlight = batches;
            return this;
        }

        /**
         * The longest a {@code tryAcquire} waits for Redis (10 ms..60 s); default 1 s. Past it the caller
         * gets {@code UNAVAILABLE}, the deduction is kept as uncertain (voided later) and the circuit
         * opens.
         */
        public Builder acquireTimeout(Duration acquireTimeout) {
            requireNonNull(acquireTimeout, "acquireTimeout");
            requireArgument(
                    acquireTimeout.compareTo(Duration.ofMillis(10)) >= 0
                            && acquireTimeout.compareTo(Duration.ofSeconds(60)) <= 0,
                    "acquireTimeout",
                    "must be within 10 ms..60 s, was %s",
                    acquireTimeout);
            this.acquireTimeout = acquireTimeout;
            return this;
        }

        /** How often an open circuit asks Redis whether it is back (10 ms..10 s); default 100 ms. */
        public Builder probeInterval(Duration probeInterval) {
            requireNonNull(probeInterval, "probeInterval");
            requireArgument(
                    probeInterval.compareTo(Duration.ofMillis(10)) >= 0
                            && probeInterval.compareTo(Duration.ofSeconds(10)) <= 0,
                    "probeInterval",
                    "must be within 10 ms..10 s, was %s",
                    probeInterval);
            this.probeInterval = probeInterval;
            return this;
        }

        /** Batched mode: callers waiting beyond this get {@code UNAVAILABLE}; default {@code acquireTimeout}. */
        public Builder requestTimeout(Duration requestTimeout) {
            requireNonNull(requestTimeout, "requestTimeout");
            requireArgument(!requestTimeout.isNegative() && !requestTimeout.isZero(), "requestTimeout", "must be > 0");
            this.requestTimeout = requestTimeout;
            return this;
        }

        /** Batched mode: acquires waiting for the batcher beyond this are refused; default 10,000. */
        public Builder queueCapacity(int queueCapacity) {
            requireArgument(queueCapacity >= 1, "queueCapacity", "must be >= 1, was %d", queueCapacity);
            this.queueCapacity = queueCapacity;
            return this;
        }

        public PermitIssuer build() {
            PermitIssuer issuer = new PermitIssuer(this);
            if (issuer.batcher != null) {
                issuer.batcher.start();
            }
            return issuer;
        }
    }
}
