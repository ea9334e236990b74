package io.pidpool.client.internal.ids;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.SnowflakeId;
import io.pidpool.core.id.SnowflakeIds;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.port.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snowflake ids whose worker id comes from a {@link CuratorWorkerIdRegistry} (the {@code
 * IdServiceProxy}, made safe): it takes a slot, issues ids with a {@link SnowflakeIds} for it, stops
 * at once when the slot may be lost, and takes a slot again (the same one if it can) after a
 * reconnect or a new session.
 *
 * <p><b>Why ids never repeat across holders of one slot.</b> Only ids returned by {@link #nextId()}
 * count as issued. Before returning an id, this class makes sure the slot's {@link SlotMark} in
 * ZooKeeper is at least the id's timestamp: it keeps a <em>reservation</em> ({@code reservation}
 * ahead of the clock, default {@value #DEFAULT_RESERVATION_MILLIS} ms, renewed in the background when
 * half of it is used), and an id beyond the reservation is discarded unless a synchronous renewal
 * succeeds. The mark can only be written by the slot's holder, and a new holder claims the mark when
 * it takes the slot and issues only ids after it ({@link CuratorWorkerIdRegistry#floorMillis}). So
 * every id of a former holder — even one that was paused, partitioned or whose clock ran fast — is at
 * or below the floor of the next holder, whatever the clocks of the two machines say. Within one
 * process the generator that replaces another starts after the old one's last id as well. On a
 * graceful {@link #close()} the mark is lowered to the last id actually issued, so a successor need not
 * wait for the reservation to pass.
 *
 * <p><b>Cost.</b> About one ZooKeeper write per {@code reservation / 2} while ids are being issued,
 * none while idle: then the reservation lapses, and the first id after the pause renews it
 * synchronously (one round trip), as an id beyond the reservation always does. Many idle clients in
 * one ensemble would otherwise write (and sync to disk) once a second each for nothing. A
 * successor whose floor lies ahead of its clock waits for the clock like {@link SnowflakeIds} does (at
 * most {@code maxWait}, then {@code UNAVAILABLE}, retryable). That happens when a holder dies without
 * closing and its session expires within {@code reservation} (a forced expiry; a real crash takes
 * the session timeout, by which time the reservation has passed).
 *
 * <p><b>Errors.</b> {@link #nextId()} throws a retryable {@code UNAVAILABLE} {@link PidPoolException}
 * while no slot can be held or reserved (ZooKeeper unreachable, all 32 slots taken: then a {@link
 * io.pidpool.core.id.WorkerSlotsExhaustedException}), or while the clock is far behind the floor.
 * A failed attempt to take a slot delays the next (doubling up to {@value #MAX_RETRY_MILLIS} ms), and
 * calls in between are refused without asking ZooKeeper.
 *
 * <p>One class, a little over 400 lines: taking a slot, renewing and closing keep the argument above
 * only together (the reservation's holding is {@link ReservedSlot}).
 *
 * <p>Concurrency: {@link #nextId()} is lock-free while the reservation covers the clock; renewing,
 * taking a slot and closing are serialised ({@code activation} lock, then the holding's own monitor).
 * One daemon thread per instance renews the reservation ({@link ReservedSlot}) and takes a slot
 * again after a loss. A registry feeds at most one instance at a time.
 */
public final class ClusterSnowflakeIds implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterSnowflakeIds.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();
    private static final int ATTEMPTS = 3;

    public static final long DEFAULT_RESERVATION_MILLIS = 2_000;
    /** The longest wait between two attempts to take a slot. */
    static final long MAX_RETRY_MILLIS = 5_000;

    private final CuratorWorkerIdRegistry registry;
    private final Clock clock;
    private final Ticker ticker;
    private final long epochMillis;
    private final int datacenterId;
    private final Duration maxLead;
    private final Duration maxWait;
    private final long reservationMillis;
    private final long renewMillis;
    private final ScheduledExecutorService renewer;
    private final Object activation = new Object();
    private volatile ReservedSlot active;
    private volatile boolean closed;
    // guarded by activation
    private long issuedBefore = -1;
    private OptionalInt preferred;
    private int failedAttempts;
    private long nextAttemptMillis;
    private String lastFailure;

    private ClusterSnowflakeIds(Builder b) {
        this.registry = b.registry;
        this.clock = b.clock;
        this.ticker = b.ticker;
        this.epochMillis = b.epoch.toEpochMilli();
        this.datacenterId = b.datacenterId;
        this.maxLead = b.maxLead;
        this.maxWait = b.maxWait;
        this.reservationMillis = b.reservation.toMillis();
        this.preferred = b.preferred;
        registry.attach(this);
        int n = INSTANCES.incrementAndGet();
        this.renewer = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "snowflake-ids-" + n);
            thread.setDaemon(true);
            return thread;
        });
        this.renewMillis = Math.max(10, reservationMillis / 8);
        renewer.execute(this::renewLoop);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The next id. Thread-safe. Takes a slot first if none is held.
     *
     * @throws PidPoolException {@code UNAVAILABLE} (retryable) when no slot can be held or reserved
     *     right now, or the clock is too far behind; {@code ILLEGAL_STATE} after {@link #close()}
     */
    public long nextId() {
        for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
            ReservedSlot a = active;
            if (a == null || a.stopped) {
                a = activate();
            }
            long id = a.ids.nextId();
            long timestamp = SnowflakeIds.decode(id, epochMillis).timestampMillis();
            if (timestamp > a.reservedUntil && !a.extend(timestamp)) {
                continue; // discarded: beyond what ZooKeeper knows we may have issued
            }
            if (a.stopped) {
                continue; // discarded: the slot may be someone else's now
            }
            a.lastIssued = timestamp;
            return id;
        }
        throw PidPoolException.unavailable(
                "no worker id could be held and reserved in ZooKeeper; ids refused (retry later)", null);
    }

    /** The worker id in use, if a slot is held and not lost. */
    public OptionalInt workerId() {
        ReservedSlot a = active;
        return a == null || a.stopped ? OptionalInt.empty() : OptionalInt.of(a.slot.workerId());
    }

    /** Decodes an id of this generator (same epoch). */
    public SnowflakeId decode(long id) {
        return SnowflakeIds.decode(id, epochMillis);
    }

    /**
     * Stops issuing, lowers the slot's mark to the last id issued and releases the slot. The registry
     * stays open (it belongs to the caller). Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        synchronized (activation) {
            ReservedSlot a = active;
            active = null;
            if (a != null) {
                retire(a);
                a.lowerMark();
                registry.release();
            }
        }
        renewer.shutdownNow();
        registry.detach(this);
    }

    @Override
    public String toString() {
        return "ClusterSnowflakeIds[" + registry.owner() + ", worker=" + workerId() + "]";
    }

    // ---------------------------------------------------------------- internals

    private ReservedSlot activate() {
        synchronized (activation) {
            requireState(!closed, "this ClusterSnowflakeIds is closed");
            ReservedSlot old = active;
            if (old != null && !old.stopped) {
                return old;
            }
            if (old != null) {
                active = null;
                retire(old);
                preferred = OptionalInt.of(old.slot.workerId());
                if (old.release) {
                    registry.release();
                }
            }
            long now = clock.millis();
            if (failedAttempts > 0 && now < nextAttemptMillis) {
                throw PidPoolException.unavailable(
                        "no worker id held (" + lastFailure + "); the next attempt in " + (nextAttemptMillis - now)
                                + " ms",
                        null);
            }
            ReservedSlot.Ticket ticket = new ReservedSlot.Ticket();
            WorkerSlot slot;
            try {
                slot = registry.acquire(preferred, ticket);
            } catch (PidPoolException e) {
                backOff(now, e);
                throw e;
            }
            failedAttempts = 0;
            long claimed;
            try {
                claimed = registry.floorMillis(slot);
            } catch (PidPoolException e) {
                throw PidPoolException.unavailable("worker id " + slot.workerId() + " was lost while being taken", e);
            }
            long floor = Math.max(claimed, issuedBefore);
            SnowflakeIds ids = SnowflakeIds.builder()
                    .workerId(slot.workerId())
                    .datacenterId(datacenterId)
                    .clock(clock)
                    .ticker(ticker)
                    .epoch(Instant.ofEpochMilli(epochMillis))
                    .maxLead(maxLead)
                    .maxWait(maxWait)
                    .issueAfter(floor)
                    .build();
            long target = Math.max(clock.millis(), floor) + reservationMillis;
            ReservedSlot a = new ReservedSlot(slot, ids, -1, registry, clock, reservationMillis);
            if (!registry.reserve(slot, target)) {
                registry.release();
                throw PidPoolException.unavailable(
                        "worker id " + slot.workerId() + " was lost before it could be reserved", null);
            }
            a.reservedUntil = target;
            ticket.bind(a);
            active = a;
            preferred = OptionalInt.of(slot.workerId());
            log.info("Issuing ids as worker {} after {}", slot.workerId(), Instant.ofEpochMilli(Math.max(floor, 0)));
            return a;
        }
    }

    /** Under activation: remember how far a generator got, so its successor here starts later. */
    private void retire(ReservedSlot a) {
        a.stopped = true;
        issuedBefore = Math.max(issuedBefore, a.ids.lastTimestampMillis());
    }

    /**
     * A failed attempt to take a slot delays the next one, doubling from the renewal period up to
     * {@value #MAX_RETRY_MILLIS} ms: with all 32 slots held, every other client of the cluster would
     * otherwise ask ZooKeeper several times a second each, for as long as it runs.
     */
    private void backOff(long now, PidPoolException e) {
        failedAttempts++;
        long delay = Math.min(MAX_RETRY_MILLIS, renewMillis << Math.min(failedAttempts - 1, 16));
        nextAttemptMillis = now + delay - ThreadLocalRandom.current().nextLong(delay / 4 + 1);
        lastFailure = e.getMessage();
        if (failedAttempts == 1 && e instanceof WorkerSlotsExhaustedException) {
            log.warn("No worker id free for snowflake ids: {}; trying again now and then", e.getMessage());
        }
    }

    /** Renewer thread: one {@link #renew()}, then the next when it says. */
    private void renewLoop() {
        long delay = renew();
        if (!closed) {
            try {
                renewer.schedule(this::renewLoop, delay, TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                // closed meanwhile
            }
        }
    }

    /**
     * Renewer thread: keeps the reservation ahead of the clock while ids flow; takes a slot again after
     * a loss. Returns when to run again: soon while ids flow, at the next allowed attempt while no
     * slot can be taken, and every half reservation while idle (a sleeping thread costs nothing; one
     * waking four times a second in each of hundreds of clients does).
     */
    private long renew() {
        if (closed) {
            return renewMillis;
        }
        try {
            ReservedSlot a = active;
            if (a == null || a.stopped) {
                activate();
                return renewMillis;
            }
            if (!registry.current().map(a.slot::equals).orElse(false)) {
                a.stopped = true; // lost without (or before) the listener's word
                return renewMillis;
            }
            long now = clock.millis();
            // idle: the reservation lapses, and the next id renews it itself (one round trip)
            boolean issuing = now - a.lastIssued < reservationMillis;
            if (issuing && a.reservedUntil - now < reservationMillis / 2) {
                a.extend(now);
            }
            return issuing ? renewMillis : reservationMillis / 2;
        } catch (PidPoolException e) {
            log.debug("Worker id not available yet: {}", e.getMessage());
            return retryDelay();
        } catch (RuntimeException e) {
            log.warn("Snowflake id renewal failed", e);
            return renewMillis;
        }
    }

    /** How long until the next attempt to take a slot is allowed. */
    private long retryDelay() {
        synchronized (activation) {
            return failedAttempts == 0 ? renewMillis : Math.max(renewMillis, nextAttemptMillis - clock.millis());
        }
    }

    /** Builds a {@link ClusterSnowflakeIds}. Not thread-safe. */
    public static final class Builder {
        private CuratorWorkerIdRegistry registry;
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.system();
        private Instant epoch = SnowflakeIds.DEFAULT_EPOCH;
        private int datacenterId;
        private Duration maxLead = Duration.ofMillis(SnowflakeIds.DEFAULT_MAX_LEAD_MILLIS);
        private Duration maxWait = Duration.ofMillis(SnowflakeIds.DEFAULT_MAX_WAIT_MILLIS);
        private Duration reservation = Duration.ofMillis(DEFAULT_RESERVATION_MILLIS);
        private OptionalInt preferred = OptionalInt.empty();

        private Builder() {}

        /** Required: where the worker id comes from. It stays the caller's (not closed here). */
        public Builder registry(CuratorWorkerIdRegistry registry) {
            this.registry = requireNonNull(registry, "registry");
            return this;
        }

        /** The wall clock of the ids and of the reservations; default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = requireNonNull(clock, "clock");
            return this;
        }

        /** Measures {@link SnowflakeIds}' wait for the clock; default {@link Ticker#system()}. */
        public Builder ticker(Ticker ticker) {
            this.ticker = requireNonNull(ticker, "ticker");
            return this;
        }

        /** The id epoch; all generators of a cluster must agree. Default {@link SnowflakeIds#DEFAULT_EPOCH}. */
        public Builder epoch(Instant epoch) {
            requireNonNull(epoch, "epoch");
            requireArgument(epoch.toEpochMilli() >= 0, "epoch", "epoch must not precede 1970, was %s", epoch);
            this.epoch = epoch;
            return this;
        }

        /** 0..31; default 0. */
        public Builder datacenterId(int datacenterId) {
            requireArgument(
                    datacenterId >= 0 && datacenterId <= SnowflakeIds.MAX_DATACENTER_ID,
                    "datacenterId",
                    "datacenterId must be within 0..%d, was %d",
                    SnowflakeIds.MAX_DATACENTER_ID,
                    datacenterId);
            this.datacenterId = datacenterId;
            return this;
        }

        /** See {@link SnowflakeIds.Builder#maxLead}; default 500 ms. */
        public Builder maxLead(Duration maxLead) {
            this.maxLead = requireNonNull(maxLead, "maxLead");
            return this;
        }

        /** See {@link SnowflakeIds.Builder#maxWait}; default 1 s. */
        public Builder maxWait(Duration maxWait) {
            this.maxWait = requireNonNull(maxWait, "maxWait");
            return this;
        }

        /**
         * How far ahead of the clock the slot's mark is kept; 100 ms..1 min, default 2 s, and more
         * than {@code maxLead}. Longer means fewer ZooKeeper writes but a longer wait for a successor
         * after a forced session expiry.
         */
        public Builder reservation(Duration reservation) {
            requireArgument(
                    reservation != null
                            && reservation.toMillis() >= 100
                            && reservation.compareTo(Duration.ofMinutes(1)) <= 0,
                    "reservation",
                    "reservation must be within 100 ms..1 min, was %s",
                    reservation);
            this.reservation = reservation;
            return this;
        }

        /** The worker id to ask for first (e.g. the one this service had before a restart). */
        public Builder preferredWorkerId(int workerId) {
            requireArgument(
                    workerId >= 0 && workerId < WorkerSlots.COUNT,
                    "workerId",
                    "preferred workerId must be within 0..%d, was %d",
                    WorkerSlots.COUNT - 1,
                    workerId);
            this.preferred = OptionalInt.of(workerId);
            return this;
        }

        /**
         * Starts the instance: a slot is taken in the background at once, or by the first {@link
         * #nextId()}.
         *
         * @throws PidPoolException {@code ILLEGAL_STATE} if the registry already feeds another instance
         */
        public ClusterSnowflakeIds build() {
            requireNonNull(registry, "registry");
            requireArgument(
                    reservation.compareTo(maxLead) > 0,
                    "reservation",
                    "reservation (%s) must be longer than maxLead (%s)",
                    reservation,
                    maxLead);
            // let SnowflakeIds validate maxLead and maxWait now rather than at the first id
            SnowflakeIds.builder().workerId(0).maxLead(maxLead).maxWait(maxWait);
            return new ClusterSnowflakeIds(this);
        }
    }
}
