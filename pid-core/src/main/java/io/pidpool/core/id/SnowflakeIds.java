package io.pidpool.core.id;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * A Snowflake id generator: {@code 0 | 41-bit milliseconds since a custom epoch | 5-bit datacenter
 * id | 5-bit worker id | 12-bit sequence}. Ids are positive {@code long}s.
 *
 * <p><b>Contract.</b> One instance never returns the same id twice and every id it returns is
 * strictly greater than the one before (in the order the calls took effect), whatever its clock does.
 * Two instances with different {@code (datacenterId, workerId)} pairs never return the same id,
 * because those bits differ. Two instances with the <em>same</em> pair must never run at the same
 * time; {@link io.pidpool.core.port.WorkerIdRegistry} hands out worker ids exclusively for that.
 *
 * <p><b>Clock step-back and overload: borrow (bounded), then wait (bounded), then refuse.</b> The
 * generator keeps the timestamp and sequence of the last id it issued. The next id uses {@code
 * max(clock, last timestamp)}; within one millisecond the sequence counts up, and when it is used up
 * (4096 ids in one millisecond) the generator borrows the next millisecond. So when the wall clock
 * steps back (NTP step, VM migration) ids keep coming from the last timestamp and stay increasing,
 * without waiting. The borrowed lead is bounded by {@code maxLead} (default {@value
 * #DEFAULT_MAX_LEAD_MILLIS} ms): an id is never more than {@code maxLead} ahead of the clock reading
 * it was issued at. When the next id would be, the caller waits for the clock, re-reading it, for
 * at most {@code maxWait} (default {@value #DEFAULT_MAX_WAIT_MILLIS} ms, measured on the injected
 * {@link Ticker}). Under overload (more than 4096 ids per millisecond for longer than {@code
 * maxLead}) that wait is about a millisecond, like the classic generator's spin to the next
 * millisecond; after a step-back of more than {@code maxLead + maxWait} it runs out and the call is
 * refused with a retryable {@link ErrorCode#UNAVAILABLE} {@link PidPoolException}, changing nothing,
 * until the clock has caught up. Refusing beats repeating.
 *
 * <p><b>Handing a worker id over.</b> Ids carry timestamps at most {@code maxLead} ahead of their
 * issuer's clock. A successor with the same worker id is safe when its first id is later than the
 * predecessor's last:
 *
 * <ul>
 *   <li>same process (after a ZooKeeper reconnect): pass the old generator's {@link
 *       #lastTimestampMillis()} to {@link Builder#issueAfter(long)};
 *   <li>graceful release: stop issuing, wait {@link #releaseDelayMillis()}, then release the slot;
 *   <li>crash or lost session: the slot is recycled only when the session expires ({@code T} after the
 *       last heartbeat), while the loser stopped issuing at its SUSPENDED notice (about {@code 2T/3}),
 *       so {@code maxLead} plus the clock skew between machines must stay below {@code T/3}: with
 *       {@code T = 5 s}, 500 ms leaves over a second for skew.
 * </ul>
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free: the last {@code (timestamp, sequence)} pair is one
 * {@link AtomicLong} advanced by compare-and-set, so concurrent callers never share an id. A caller
 * that has to wait spins (under a millisecond to go) or parks for a millisecond at a time.
 */
public final class SnowflakeIds {
    public static final int TIMESTAMP_BITS = 41;
    public static final int DATACENTER_BITS = 5;
    public static final int WORKER_BITS = 5;
    public static final int SEQUENCE_BITS = 12;

    public static final int MAX_DATACENTER_ID = (1 << DATACENTER_BITS) - 1;
    public static final int MAX_WORKER_ID = (1 << WORKER_BITS) - 1;
    public static final int MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1;
    /** The largest timestamp, in milliseconds after the epoch, that fits in 41 bits (~69.7 years). */
    public static final long MAX_TIMESTAMP = (1L << TIMESTAMP_BITS) - 1;

    /** The default custom epoch: 2025-01-01T00:00:00Z; ids run out in 2094. */
    public static final Instant DEFAULT_EPOCH = Instant.parse("2025-01-01T00:00:00Z");

    public static final long DEFAULT_MAX_LEAD_MILLIS = 500;
    public static final long DEFAULT_MAX_WAIT_MILLIS = 1_000;

    private static final int WORKER_SHIFT = SEQUENCE_BITS;
    private static final int DATACENTER_SHIFT = SEQUENCE_BITS + WORKER_BITS;
    private static final int TIMESTAMP_SHIFT = SEQUENCE_BITS + WORKER_BITS + DATACENTER_BITS;
    private static final long PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final LongSupplier clockMillis;
    private final Ticker ticker;
    private final long epochMillis;
    private final long maxLeadMillis;
    private final long maxWaitNanos;
    private final int datacenterId;
    private final int workerId;
    private final long nodeBits;
    /**
     * {@code (timestamp - epoch) << SEQUENCE_BITS | sequence} of the last id issued; before the
     * first, the floor with a full sequence ({@code -1} without a floor). Only ever moves up.
     */
    private final AtomicLong last;

    private SnowflakeIds(Builder b) {
        this.clockMillis = b.clockMillis;
        this.ticker = b.ticker;
        this.epochMillis = b.epochMillis;
        this.maxLeadMillis = b.maxLeadMillis;
        this.maxWaitNanos = b.maxWaitNanos;
        this.datacenterId = b.datacenterId;
        this.workerId = b.workerId;
        this.nodeBits = ((long) b.datacenterId << DATACENTER_SHIFT) | ((long) b.workerId << WORKER_SHIFT);
        // a floor before the epoch is no floor at all
        long floor = Math.max(-1, b.issueAfterMillis - epochMillis);
        requireArgument(
                floor <= MAX_TIMESTAMP,
                "issueAfter",
                "issueAfter lies beyond the id epoch's 41-bit range: %d",
                b.issueAfterMillis);
        this.last = new AtomicLong((floor << SEQUENCE_BITS) | MAX_SEQUENCE);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The next id. Thread-safe. Returns at once unless ids have run {@code maxLead} ahead of the
     * clock; then waits up to {@code maxWait} for the clock to catch up.
     *
     * @throws PidPoolException {@link ErrorCode#UNAVAILABLE} (retryable) when the clock stays more
     *     than {@code maxLead} behind the ids already issued for {@code maxWait}; {@link
     *     ErrorCode#ILLEGAL_STATE} when the clock reads before the epoch or the 41-bit timestamp space
     *     is exhausted
     */
    public long nextId() {
        boolean waiting = false;
        long waitStart = 0;
        while (true) {
            long previous = last.get();
            long now = clockMillis.getAsLong() - epochMillis;
            if (now < 0) {
                throw PidPoolException.illegalState(
                        "clock reads %s, before the id epoch %s",
                        Instant.ofEpochMilli(now + epochMillis), Instant.ofEpochMilli(epochMillis));
            }
            long previousTimestamp = previous >> SEQUENCE_BITS;
            long previousSequence = previous & MAX_SEQUENCE;
            long timestamp;
            long sequence;
            if (now > previousTimestamp) {
                timestamp = now;
                sequence = 0;
            } else if (previousSequence < MAX_SEQUENCE) {
                // clock stood still or stepped back: keep counting on the last timestamp
                timestamp = previousTimestamp;
                sequence = previousSequence + 1;
            } else {
                // this millisecond is used up: borrow the next one
                timestamp = previousTimestamp + 1;
                sequence = 0;
            }
            long excess = timestamp - now - maxLeadMillis;
            if (excess > 0) {
                long t = ticker.read();
                if (!waiting) {
                    waiting = true;
                    waitStart = t;
                }
                if (t - waitStart >= maxWaitNanos) {
                    throw refusal(previousTimestamp - now);
                }
                if (excess <= 1) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(PARK_NANOS);
                }
                continue;
            }
            if (timestamp > MAX_TIMESTAMP) {
                throw PidPoolException.illegalState(
                        "the 41-bit timestamp space of epoch %s is exhausted", Instant.ofEpochMilli(epochMillis));
            }
            long next = (timestamp << SEQUENCE_BITS) | sequence;
            if (last.compareAndSet(previous, next)) {
                return (timestamp << TIMESTAMP_SHIFT) | nodeBits | sequence;
            }
        }
    }

    private PidPoolException refusal(long behindMillis) {
        return new PidPoolException(
                ErrorCode.UNAVAILABLE,
                "clock",
                String.format(
                        "clock is %d ms behind the last issued id (allowed lead %d ms, waited %d ms):"
                                + " ids refused until the clock catches up",
                        behindMillis, maxLeadMillis, TimeUnit.NANOSECONDS.toMillis(maxWaitNanos)));
    }

    /** Reads an id back into its parts, using this generator's epoch. */
    public SnowflakeId decode(long id) {
        return decode(id, epochMillis);
    }

    /** Reads an id made by a generator with the given epoch back into its parts. */
    public static SnowflakeId decode(long id, long epochMillis) {
        requireArgument(id >= 0, "id", "a Snowflake id is never negative, was %d", id);
        return new SnowflakeId(
                id,
                (id >>> TIMESTAMP_SHIFT) + epochMillis,
                (int) ((id >>> DATACENTER_SHIFT) & MAX_DATACENTER_ID),
                (int) ((id >>> WORKER_SHIFT) & MAX_WORKER_ID),
                (int) (id & MAX_SEQUENCE));
    }

    /**
     * Epoch milliseconds of the last id issued (possibly ahead of the clock by up to {@code maxLead}),
     * or the floor before the first; pass it to a successor's {@link Builder#issueAfter(long)}.
     */
    public long lastTimestampMillis() {
        return (last.get() >> SEQUENCE_BITS) + epochMillis;
    }

    /**
     * How long to wait, after the last id, before this generator's worker id may be given to another
     * process: until the clock is past {@link #lastTimestampMillis()}, so that a successor on a
     * synchronised clock starts strictly later. 0 when already past; at most {@code maxLead + 1}
     * right after an id.
     */
    public long releaseDelayMillis() {
        return Math.max(0, lastTimestampMillis() - clockMillis.getAsLong() + 1);
    }

    public int workerId() {
        return workerId;
    }

    public int datacenterId() {
        return datacenterId;
    }

    public long epochMillis() {
        return epochMillis;
    }

    public long maxLeadMillis() {
        return maxLeadMillis;
    }

    @Override
    public String toString() {
        return "SnowflakeIds[datacenter=" + datacenterId + ", worker=" + workerId + "]";
    }

    /** Builds a {@link SnowflakeIds}. Not thread-safe; use it on one thread and then drop it. */
    public static final class Builder {
        private LongSupplier clockMillis = Clock.systemUTC()::millis;
        private Ticker ticker = Ticker.system();
        private long epochMillis = DEFAULT_EPOCH.toEpochMilli();
        private long maxLeadMillis = DEFAULT_MAX_LEAD_MILLIS;
        private long maxWaitNanos = TimeUnit.MILLISECONDS.toNanos(DEFAULT_MAX_WAIT_MILLIS);
        private int datacenterId;
        private int workerId = -1;
        private long issueAfterMillis = -1;

        private Builder() {}

        /** Required: 0..31, exclusive to this generator (see {@link io.pidpool.core.port.WorkerIdRegistry}). */
        public Builder workerId(int workerId) {
            requireArgument(
                    workerId >= 0 && workerId <= MAX_WORKER_ID,
                    "workerId",
                    "workerId must be within 0..%d, was %d",
                    MAX_WORKER_ID,
                    workerId);
            this.workerId = workerId;
            return this;
        }

        /** 0..31; default 0. */
        public Builder datacenterId(int datacenterId) {
            requireArgument(
                    datacenterId >= 0 && datacenterId <= MAX_DATACENTER_ID,
                    "datacenterId",
                    "datacenterId must be within 0..%d, was %d",
                    MAX_DATACENTER_ID,
                    datacenterId);
            this.datacenterId = datacenterId;
            return this;
        }

        /** The wall clock; default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            requireNonNull(clock, "clock");
            this.clockMillis = clock::millis;
            return this;
        }

        /** The wall clock as epoch milliseconds; for tests that script the clock. */
        public Builder clockMillis(LongSupplier clockMillis) {
            this.clockMillis = requireNonNull(clockMillis, "clock");
            return this;
        }

        /** Measures {@code maxWait}; default {@link Ticker#system()}. */
        public Builder ticker(Ticker ticker) {
            this.ticker = requireNonNull(ticker, "ticker");
            return this;
        }

        /** The custom epoch; default {@link #DEFAULT_EPOCH}. All generators of a cluster must agree. */
        public Builder epoch(Instant epoch) {
            requireNonNull(epoch, "epoch");
            requireArgument(epoch.toEpochMilli() >= 0, "epoch", "epoch must not precede 1970, was %s", epoch);
            this.epochMillis = epoch.toEpochMilli();
            return this;
        }

        /** How far ids may run ahead of the clock; 0..1 minute, default 500 ms. */
        public Builder maxLead(Duration maxLead) {
            requireNonNull(maxLead, "maxLead");
            requireArgument(
                    !maxLead.isNegative() && maxLead.compareTo(Duration.ofMinutes(1)) <= 0,
                    "maxLead",
                    "maxLead must be within 0..1m, was %s",
                    maxLead);
            this.maxLeadMillis = maxLead.toMillis();
            return this;
        }

        /**
         * How long a call may wait for the clock once ids are {@code maxLead} ahead; 0..10 s, default
         * 1 s; zero refuses at once. Under overload a caller may have to let other threads take the
         * fresh milliseconds first, so keep it well above a scheduling hiccup.
         */
        public Builder maxWait(Duration maxWait) {
            requireNonNull(maxWait, "maxWait");
            requireArgument(
                    !maxWait.isNegative() && maxWait.compareTo(Duration.ofSeconds(10)) <= 0,
                    "maxWait",
                    "maxWait must be within 0..10s, was %s",
                    maxWait);
            this.maxWaitNanos = maxWait.toNanos();
            return this;
        }

        /**
         * Only issue ids with a timestamp strictly after this one (epoch milliseconds): hand over from
         * a predecessor with the same worker id, e.g. {@code old.lastTimestampMillis()}.
         */
        public Builder issueAfter(long epochMillis) {
            requireArgument(epochMillis >= -1, "issueAfter", "issueAfter must be >= -1, was %d", epochMillis);
            this.issueAfterMillis = epochMillis;
            return this;
        }

        public SnowflakeIds build() {
            requireArgument(workerId >= 0, "workerId", "workerId is required");
            return new SnowflakeIds(this);
        }
    }
}
