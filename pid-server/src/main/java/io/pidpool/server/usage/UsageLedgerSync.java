package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.ClientSequenceTracker;
import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.UsageEvent;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.UsageLedger;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;
import java.util.function.Supplier;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the usage events of the Redis shard streams ({@link UsageEventLog}) into the database
 * {@link UsageLedger}, exactly once.
 *
 * <p><b>One pass over a shard</b> ({@link #syncShard}):
 *
 * <ol>
 *   <li>read the shard's sequence heads <em>first</em> (so an event that is missing at the end is
 *       told apart from one not yet written), then the committed offset of this consumer;
 *   <li>read pages after that offset; write each deduction/refund to the database ({@link
 *       EventRecorder}: idempotent by id, a replay is recognised, the database's unique keys are the
 *       last guard); only when the whole page is committed, {@code ack} its last offset. A crash
 *       between commit and ack replays the page, which changes nothing;
 *   <li>when the pass reached the end of the stream, ask the database which sequence numbers of
 *       every client in the heads it lacks ({@link UsageLedger#missingSequences}), look them up in
 *       the stream ({@link UsageEventLog#findBySequence}) and write what is found
 *       (compensation);
 *   <li>numbers that are not in the stream any more are reported as {@link GapAlert}s; the pass then
 *       compares the month hashes in Redis ({@code d:<id>}, {@code r:<id>} of every PID of the
 *       shard) with the database and writes what the database lacks under a recovery client
 *       ({@link MonthRecordRecovery}); so the usage is not lost although its numbers are;
 *   <li>{@code trim} the stream (drops what every registered consumer acknowledged).
 * </ol>
 *
 * <p><b>Database client ids.</b> Redis numbers events per (shard, incarnation, client); the
 * database per client id. The database id is therefore {@code <shard>.<incarnation prefix>.<client>}
 * ({@link LedgerClientIds#forSource}), hashed when longer than 64 characters.
 *
 * <p><b>Concurrency.</b> One pass per shard at a time in this process (a per-shard lock; a second
 * caller returns at once with an empty report). Two processes syncing one shard at once (a worker
 * ring change) are safe: every write is idempotent and offsets only move forward. Passes over
 * different shards run in parallel.
 */
public final class UsageLedgerSync {
    private static final Logger LOG = LoggerFactory.getLogger(UsageLedgerSync.class);
    public static final int DEFAULT_PAGE = 500;
    public static final int DEFAULT_MAX_EVENTS_PER_PASS = 20_000;
    private static final int MISSING_LIMIT = 1_000;

    private final UsageEventLog log;
    private final QuotaKeys keys;
    private final RedissonClient redisson;
    private final UsageLedger ledger;
    private final String consumer;
    private final Clock clock;
    private final int page;
    private final int maxEventsPerPass;
    private final Map<Integer, ShardState> shards = new ConcurrentHashMap<>();
    /** Test hook: runs after a page is committed to the database, before its ack. */
    volatile IntConsumer beforeAck = shard -> {};

    private static final class ShardState {
        final ReentrantLock lock = new ReentrantLock();
        String incarnation;
        /** Per database client: numbers known not to be ledger entries (resets) or already alerted. */
        final Map<String, Set<Long>> covered = new HashMap<>();
    }

    /**
     * @param log the shard streams ({@link UsageEventLog#reader})
     * @param redisson the same Redis, to read month hashes for recovery
     * @param consumer this consumer's name in the streams' offset hashes (a token; every server uses
     *     the same name, so the offset is shared and the shard's current owner continues from it)
     */
    public UsageLedgerSync(
            UsageEventLog log, RedissonClient redisson, UsageLedger ledger, String consumer, Clock clock) {
        this(log, redisson, ledger, consumer, clock, DEFAULT_PAGE, DEFAULT_MAX_EVENTS_PER_PASS);
    }

    public UsageLedgerSync(
            UsageEventLog log,
            RedissonClient redisson,
            UsageLedger ledger,
            String consumer,
            Clock clock,
            int page,
            int maxEventsPerPass) {
        this.log = requireNonNull(log, "log");
        this.keys = log.keys();
        this.redisson = requireNonNull(redisson, "redisson");
        this.ledger = requireNonNull(ledger, "ledger");
        this.consumer = Names.requireToken(consumer, "consumer");
        this.clock = requireNonNull(clock, "clock");
        requireArgument(page >= 1 && page <= UsageEventLog.MAX_READ, "page", "page must be 1..10000, was %d", page);
        requireArgument(maxEventsPerPass >= page, "maxEventsPerPass", "must be >= page, was %d", maxEventsPerPass);
        this.page = page;
        this.maxEventsPerPass = maxEventsPerPass;
    }

    public QuotaKeys keys() {
        return keys;
    }

    /** One pass over every shard, one after another. */
    public List<SyncReport> syncAll() {
        List<SyncReport> reports = new ArrayList<>(keys.shards());
        for (int s = 0; s < keys.shards(); s++) {
            reports.add(syncShard(s));
        }
        return reports;
    }

    /**
     * One pass over {@code shard} (see the class comment). Redis or database failures surface as
     * {@link PidPoolException} {@code UNAVAILABLE}; whatever was acknowledged before stays done.
     */
    public SyncReport syncShard(int shard) {
        requireArgument(
                shard >= 0 && shard < keys.shards(),
                "shard",
                "shard must be within 0..%d, was %d",
                keys.shards() - 1,
                shard);
        ShardState state = shards.computeIfAbsent(shard, s -> new ShardState());
        if (!state.lock.tryLock()) {
            return new SyncReport(shard, "", 0, 0, 0, 0, 0, 0, 0, List.of(), List.of(), false, false);
        }
        try {
            return pass(shard, state);
        } finally {
            state.lock.unlock();
        }
    }

    /**
     * Runs {@code work} while no pass of this process runs over {@code shard} (waits for a running
     * one), so the database ledger of the shard does not change under it from this process.
     */
    public <T> T underShardLock(int shard, Supplier<T> work) {
        ShardState state = shards.computeIfAbsent(shard, s -> new ShardState());
        state.lock.lock();
        try {
            return work.get();
        } finally {
            state.lock.unlock();
        }
    }

    private SyncReport pass(int shard, ShardState state) {
        MonthRecordRecovery records = new MonthRecordRecovery(redisson, keys, ledger, clock, shard);
        EventRecorder recorder = new EventRecorder(shard, ledger, records, state.covered);
        UsageEventLog.Heads heads = log.heads(shard);
        boolean incarnationChanged = state.incarnation != null
                && !heads.incarnation().isEmpty()
                && !state.incarnation.equals(heads.incarnation());
        if (incarnationChanged) {
            LOG.warn(
                    "usage shard {}: sequence incarnation changed {} -> {}: Redis lost its counters;"
                            + " events of the old incarnation that were not synced are lost",
                    shard,
                    state.incarnation,
                    heads.incarnation());
        }
        if (!heads.incarnation().isEmpty()) {
            state.incarnation = heads.incarnation();
        }
        String offset = log.committed(shard, consumer);
        ClientSequenceTracker tracker = new ClientSequenceTracker();
        for (Map.Entry<String, Long> head : heads.lastByClient().entrySet()) {
            String db = LedgerClientIds.forSource(shard, heads.incarnation(), head.getKey());
            long contiguous =
                    ledger.progress(db).map(SequenceProgress::contiguousThrough).orElse(0L);
            tracker.restore(new ClientSequenceTracker.Source(shard, heads.incarnation(), head.getKey()), contiguous);
        }
        int read = 0;
        boolean caughtUp = false;
        while (read < maxEventsPerPass) {
            List<UsageEvent> events = log.read(shard, offset, Math.min(page, maxEventsPerPass - read));
            if (events.isEmpty()) {
                caughtUp = true;
                break;
            }
            for (UsageEvent e : events) {
                read++;
                tracker.accept(e);
                recorder.apply(e);
            }
            offset = events.get(events.size() - 1).offset();
            beforeAck.accept(shard);
            log.ack(shard, consumer, offset);
            if (events.size() < page) {
                caughtUp = true;
                break;
            }
        }
        int streamGaps = tracker.gaps().size();
        if (streamGaps > 0) {
            LOG.info("usage shard {}: {} sequence gaps within the pages read: {}", shard, streamGaps, tracker.gaps());
        }
        List<GapAlert> alerts = new ArrayList<>();
        int compensated = 0;
        if (caughtUp && !heads.incarnation().isEmpty()) {
            compensated = fillGaps(shard, state, recorder, heads, alerts);
            if (!alerts.isEmpty()) {
                records.recoverShard(recorder.months());
            }
            log.trim(shard);
        }
        List<String> stillDrifting = recorder.orphans().isEmpty() ? List.of() : records.catchUp(recorder.drifted());
        for (GapAlert alert : alerts) {
            LOG.warn(
                    "usage shard {}: events {}..{} of client {} (incarnation {}) are neither in the database nor in"
                            + " the stream; their usage was recovered from the month records if Redis still had them",
                    shard,
                    alert.fromSeq(),
                    alert.toSeq(),
                    alert.clientId(),
                    alert.incarnation());
        }
        return new SyncReport(
                shard,
                heads.incarnation(),
                read,
                recorder.recorded(),
                recorder.duplicates(),
                recorder.resets(),
                streamGaps,
                compensated,
                records.recovered(),
                alerts,
                recorder.orphans(),
                caughtUp,
                incarnationChanged,
                stillDrifting);
    }

    /**
     * Step 3: the database's missing numbers up to each head, looked up in the stream; what is gone
     * from the stream too goes to {@code alerts}. Returns how many were found again.
     */
    private int fillGaps(
            int shard, ShardState state, EventRecorder recorder, UsageEventLog.Heads heads, List<GapAlert> alerts) {
        int compensated = 0;
        for (Map.Entry<String, Long> head : heads.lastByClient().entrySet()) {
            String client = head.getKey();
            String db = LedgerClientIds.forSource(shard, heads.incarnation(), client);
            Set<Long> covered = state.covered.computeIfAbsent(db, k -> new HashSet<>());
            TreeSet<Long> missing = new TreeSet<>(ledger.missingSequences(db, head.getValue(), MISSING_LIMIT));
            missing.removeAll(covered);
            if (missing.isEmpty()) {
                continue;
            }
            for (UsageEvent e : log.findBySequence(
                    shard, heads.incarnation(), client, missing.first(), missing.last(), UsageEventLog.START)) {
                if (missing.remove(e.sequence())) {
                    int before = recorder.recorded();
                    recorder.apply(e);
                    if (recorder.recorded() > before || e.kind() == UsageEvent.Kind.RESET) {
                        compensated++;
                    }
                }
            }
            // what is still missing is gone from Redis: alert once per process, then treat as covered
            long from = -1;
            long prev = -1;
            for (long seq : missing) {
                if (from < 0) {
                    from = seq;
                } else if (seq != prev + 1) {
                    alerts.add(new GapAlert(shard, heads.incarnation(), client, db, from, prev));
                    from = seq;
                }
                prev = seq;
                covered.add(seq);
            }
            if (from >= 0) {
                alerts.add(new GapAlert(shard, heads.incarnation(), client, db, from, prev));
            }
        }
        return compensated;
    }
}
