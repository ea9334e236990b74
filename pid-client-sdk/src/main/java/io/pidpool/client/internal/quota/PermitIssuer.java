package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.Permit;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grants {@link Permit}s: commands of a held PID, deducted atomically in Redis. This is what {@code
 * PidClient.tryAcquire} and {@code PidClient.refund} run. The issuer itself holds the flow of an
 * acquire and the wiring; its parts are named for what they do:
 *
 * <ul>
 *   <li>{@link PermitCandidates}: which held PIDs an acquire tries, in the {@link PermitPolicy}'s
 *       order (default {@link PermitPolicy#mostRemainingFirst()}), at most {@code maxAttempts};
 *   <li>direct sends ({@link DirectAcquirer}: on the caller's thread, each bounded by {@link
 *       BoundedSend}) or batched ones ({@link PermitBatcher}, {@link Builder#batching(int)}: Nagle
 *       without timers, one round trip for many);
 *   <li>{@link UncertainDeductions}: deductions no permit was handed out for, and their voiding;
 *   <li>{@link PermitRefunds}: a caller's refunds, under the same deadline and circuit;
 *   <li>{@link RedisCircuit}: whether Redis is known to be away, so callers fail at once.
 * </ul>
 *
 * <p><b>A permit is granted only</b> while {@link HeldPids#leaseValid()} holds and for a PID in {@link
 * HeldPids#heldPids()}, both checked before the deduction is sent <em>and</em> after Redis granted it;
 * if the hold was lost in between, the deduction is voided (refunded under {@code void.<deductionId>})
 * and no permit is returned. The decision is always the deduct script's: the near cache only skips
 * PIDs it <em>clearly</em> knows cannot give {@code n} ({@link QuotaNearCache}). The first grant wins;
 * empty when none grants.
 *
 * <p><b>Ids.</b> Every attempt gets a fresh id {@code <yyyyMM>-<shard>-<snowflake>} ({@link
 * DeductionIds}); the deduct script indexes it, so {@link #refund(String, String, int)} finds PID and
 * month from the id alone.
 *
 * <p><b>Failures.</b> A caller of {@code tryAcquire} or {@code refund} never waits longer than {@code
 * acquireTimeout} (default 1 s); a deduction Redis did not answer is kept as uncertain and voided
 * later; a refund Redis did not answer may be sent again with the same refund id. A send Redis did not
 * answer opens the circuit: from then on every acquire and refund fails at once with {@code
 * UNAVAILABLE} (nothing is sent) until a background probe gets an answer.
 *
 * <p><b>Concurrency.</b> Thread-safe. In direct mode every call runs on the caller's thread; in batched
 * mode the batcher thread owns the in-flight requests and callers wait on a future (at most {@code
 * requestTimeout}). Probes and voids run on the issuer's two background threads. Lifecycle: built
 * started; {@link #close()} once (compare-and-set).
 *
 * <p><b>Why this file is longer than ~400 lines.</b> About 170 lines are the {@link Builder}, whose
 * every option states its bounds and default, and most of the rest is the public contract of
 * {@code tryAcquire}/{@code refund}; the logic itself lives in the parts above.
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

    private final RedissonQuotaLedger ledger;
    private final HeldPids held;
    private final LongSupplier ids;
    private final MonthlyWindow window;
    private final Clock clock;
    private final PermitCandidates candidates;
    private final AtomicReference<State> state = new AtomicReference<>(State.STARTED);
    private final PermitBatcher batcher;
    private final DirectAcquirer direct;
    private final MissingLimits missingLimits;
    private final Duration acquireTimeout;
    /** Probes (circuit) and voids (uncertain deductions): two threads, so a slow void never delays a probe. */
    private final ScheduledThreadPoolExecutor background;

    private final RedisCircuit circuit;
    private final UncertainDeductions uncertain;
    private final PermitRefunds refunds;

    private PermitIssuer(Builder b) {
        this.missingLimits = b.missingLimits;
        this.ledger = requireNonNull(b.ledger, "ledger");
        this.held = requireNonNull(b.held, "held");
        this.ids = requireNonNull(b.ids, "ids");
        this.window = b.window;
        this.clock = b.clock;
        Ticker ticker = b.ticker;
        this.candidates = new PermitCandidates(held, ledger.nearCache(), b.policy, b.maxAttempts);
        this.acquireTimeout = b.acquireTimeout;
        String name = ledger.clientId();
        this.background = new ScheduledThreadPoolExecutor(2, r -> {
            Thread t = new Thread(r, "pidpool-quota-background-" + name);
            t.setDaemon(true);
            return t;
        });
        background.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        Duration probeTimeout = b.probeInterval.multipliedBy(5).compareTo(acquireTimeout) < 0
                ? b.probeInterval.multipliedBy(5)
                : acquireTimeout;
        this.circuit = new RedisCircuit(
                "client " + name, () -> ledger.probeAsync(probeTimeout), background, ticker, b.probeInterval);
        this.uncertain = new UncertainDeductions(ledger, circuit, ticker, b.settleDelay, b.maxUncertain);
        this.refunds = new PermitRefunds(ledger, circuit, ticker, acquireTimeout);
        this.batcher = b.maxBatch > 0
                ? new PermitBatcher(
                        this,
                        b.maxBatch,
                        b.maxInFlight,
                        b.queueCapacity,
                        b.requestTimeout != null ? b.requestTimeout : b.acquireTimeout,
                        name)
                : null;
        this.direct = new DirectAcquirer(this, held, ticker, circuit, uncertain, acquireTimeout);
        long tick = uncertain.tickNanos();
        background.scheduleWithFixedDelay(
                () -> {
                    if (state.get() == State.STARTED) {
                        uncertain.reconcileIfDue();
                    }
                },
                tick,
                tick,
                TimeUnit.NANOSECONDS);
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
        if (!held.leaseValid()) {
            return Optional.empty();
        }
        if (circuit.isOpen()) {
            throw circuit.openError();
        }
        QuotaMonth month = window.monthOf(clock.instant());
        List<PermitPolicy.Candidate> order = candidates.order(n, month);
        if (order.isEmpty()) {
            return Optional.empty();
        }
        return batcher != null ? batcher.submit(n, month, order) : direct.acquire(n, month, order);
    }

    /**
     * {@link #tryAcquire(int)} without parking the calling thread: in batched mode the acquire is queued
     * and the future completes when its batch was answered, so one thread may keep many acquires in
     * flight (the blocking call costs one thread wake-up per permit, which on a busy machine is what
     * limits the batched rate). In direct mode the future is already complete when returned.
     *
     * <p>The future completes on a Redisson I/O thread (granted, or empty once the void of a grant
     * whose hold ended was answered) or the batcher's thread (the rest):
     * attach only short, non-blocking actions (no synchronous Redis calls), or use
     * {@code thenApplyAsync} with an executor of your own. Nothing is guaranteed about the order in
     * which futures of one thread complete.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} and {@code ILLEGAL_STATE} at once, as {@link
     *     #tryAcquire(int)}; {@code UNAVAILABLE} is reported through the future
     */
    public CompletableFuture<Optional<Permit>> tryAcquireAsync(int n) {
        MonthLedger.requireAmount(n);
        requireOpen();
        if (batcher == null) {
            try {
                return CompletableFuture.completedFuture(tryAcquire(n));
            } catch (PidPoolException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        if (!held.leaseValid()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        if (circuit.isOpen()) {
            return CompletableFuture.failedFuture(circuit.openError());
        }
        QuotaMonth month = window.monthOf(clock.instant());
        List<PermitPolicy.Candidate> order = candidates.order(n, month);
        if (order.isEmpty()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return batcher.enqueue(n, month, order);
    }

    DeductRequest request(String pid, QuotaMonth month, int n) {
        String id = DeductionIds.encode(month, ledger.keys().shardOf(pid), ids.getAsLong());
        return new DeductRequest(pid, month, n, id, true);
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

    /**
     * Gives back a granted deduction no permit is handed out for (the hold ended, or the caller stopped
     * waiting) with a send bounded by {@code timeout}; never blocks. See {@link UncertainDeductions#voidGranted}.
     */
    CompletableFuture<Void> voidGranted(DeductRequest granted, Duration timeout) {
        log.info(
                "no permit handed out for deduction {} of PID {} (hold ended or caller gone): voiding it",
                granted.deductionId(),
                granted.pid());
        return uncertain.voidGranted(granted, timeout);
    }

    /** A deduction whose outcome is not known (its batch was not answered): voided later. */
    void remember(DeductRequest request) {
        uncertain.remember(request, null);
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
        return uncertain.reconcile();
    }

    /** Deductions whose outcome is not yet known or not yet voided. */
    public int uncertainCount() {
        return uncertain.count();
    }

    /**
     * Refunds {@code n} commands of a permit by its deduction id alone (the refund rules: partial and
     * repeated refunds allowed, never above the deduction, idempotent by {@code refundId}). Works from
     * any client and after restarts while Redis keeps the month. Waits for Redis at most {@code
     * acquireTimeout} for both round trips (lookup, refund); fails at once while Redis is known to be
     * away ({@link PermitRefunds}).
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} for a malformed id, a refund id starting with
     *     {@value #VOID_PREFIX} or a bad amount; {@code NOT_FOUND} on {@code deductionId} when no such
     *     permit deduction is known; {@code UNAVAILABLE} when Redis does not answer in time or is known
     *     to be away (the refund may or may not have been applied: send the same refund again, with
     *     the same refund id; it is applied at most once)
     */
    public RefundResult refund(String deductionId, String refundId, int n) {
        return refunds.refund(deductionId, refundId, n);
    }

    /** Refunds {@code n} commands of {@code permit}: one round trip, no index lookup; bounded like the above. */
    public RefundResult refund(Permit permit, String refundId, int n) {
        return refunds.refund(permit, refundId, n);
    }

    boolean leaseValid() {
        return held.leaseValid();
    }

    RedissonQuotaLedger ledger() {
        return ledger;
    }

    int maxAttempts() {
        return candidates.maxAttempts();
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
        if (uncertain.count() > 0) {
            try {
                uncertain.reconcile();
            } catch (PidPoolException e) {
                log.warn("{} deductions of uncertain outcome left at close: {}", uncertain.count(), e.getMessage());
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

        /** Reports held PIDs refused for want of a limit in Redis. Optional (default: not reported). */
        public Builder missingLimits(MissingLimits missingLimits) {
            this.missingLimits = requireNonNull(missingLimits, "missingLimits");
            return this;
        }

        /** Required. */
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
