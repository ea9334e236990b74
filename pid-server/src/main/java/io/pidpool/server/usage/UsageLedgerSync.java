package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.ClientSequenceTracker;
import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.UsageEvent;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Deduction;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.SequenceProgress;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.core.quota.QuotaMonth;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntConsumer;
import org.redisson.api.RMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the usage events of the Redis shard streams ({@link UsageEventLog}) into the database
 * {@link UsageLedger}, exactly once .
 *
 * <p><b>One pass over a shard</b> ({@link #syncShard}):
 *
 * <ol>
 *   <li>read the shard's sequence heads <em>first</em> (so an event that is missing at the end is
 *       told apart from one not yet written), then the committed offset of this consumer;
 *   <li>read pages after that offset; write each deduction/refund to the database (idempotent by id:
 *       a replay is recognised, the database's unique keys are the last guard); only when the whole
 *       page is committed, {@code ack} its last offset. A crash between commit and ack replays the
 *       page, which changes nothing;
 *   <li>when the pass reached the end of the stream, ask the database which sequence numbers of
 *       every client in the heads it lacks ({@link UsageLedger#missingSequences}), look them up in
 *       the stream ({@link UsageEventLog#findBySequence}) and write what is found
 *       (compensation);
 *   <li>numbers that are not in the stream any more are reported as {@link GapAlert}s; the pass then
 *       compares the month hashes in Redis ({@code d:<id>}, {@code r:<id>} of every PID of the
 *       shard) with the database and writes what the database lacks under a recovery client
 *       ({@link #recoveryClientId}); so the usage is not lost although its numbers are;
 *   <li>{@code trim} the stream (drops what every registered consumer acknowledged).
 * </ol>
 *
 * <p><b>Database client ids.</b> Redis numbers events per (shard, incarnation, client); the
 * database per client id. The database id is therefore {@code <shard>.<incarnation prefix>.<client>}
 * ({@link #dbClientId}), hashed when longer than 64 characters.
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
    public <T> T underShardLock(int shard, java.util.function.Supplier<T> work) {
        ShardState state = shards.computeIfAbsent(shard, s -> new ShardState());
        state.lock.lock();
        try {
            return work.get();
        } finally {
            state.lock.unlock();
        }
    }

    private SyncReport pass(int shard, ShardState state) {
        Pass p = new Pass(shard, state);
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
            String db = dbClientId(shard, heads.incarnation(), head.getKey());
            long contiguous =
                    ledger.progress(db).map(SequenceProgress::contiguousThrough).orElse(0L);
            tracker.restore(new ClientSequenceTracker.Source(shard, heads.incarnation(), head.getKey()), contiguous);
        }
        boolean caughtUp = false;
        while (p.read < maxEventsPerPass) {
            List<UsageEvent> events = log.read(shard, offset, Math.min(page, maxEventsPerPass - p.read));
            if (events.isEmpty()) {
                caughtUp = true;
                break;
            }
            for (UsageEvent e : events) {
                p.read++;
                tracker.accept(e);
                p.apply(e);
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
        if (caughtUp && !heads.incarnation().isEmpty()) {
            fillGaps(p, heads);
            if (!p.alerts.isEmpty()) {
                p.recoverFromRecords();
            }
            log.trim(shard);
        }
        if (!p.orphans.isEmpty()) {
            p.reconcileDrift();
        }
        for (GapAlert alert : p.alerts) {
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
                p.read,
                p.recorded,
                p.duplicates,
                p.resets,
                streamGaps,
                p.compensated,
                p.recovered,
                p.alerts,
                p.orphans,
                caughtUp,
                incarnationChanged,
                List.copyOf(p.stillDrifting));
    }

    /** Step 3: the database's missing numbers up to each head, looked up in the stream. */
    private void fillGaps(Pass p, UsageEventLog.Heads heads) {
        for (Map.Entry<String, Long> head : heads.lastByClient().entrySet()) {
            String client = head.getKey();
            String db = dbClientId(p.shard, heads.incarnation(), client);
            Set<Long> covered = p.state.covered.computeIfAbsent(db, k -> new HashSet<>());
            TreeSet<Long> missing = new TreeSet<>(ledger.missingSequences(db, head.getValue(), MISSING_LIMIT));
            missing.removeAll(covered);
            if (missing.isEmpty()) {
                continue;
            }
            for (UsageEvent e : log.findBySequence(
                    p.shard, heads.incarnation(), client, missing.first(), missing.last(), UsageEventLog.START)) {
                if (missing.remove(e.sequence())) {
                    int before = p.recorded;
                    p.apply(e);
                    if (p.recorded > before || e.kind() == UsageEvent.Kind.RESET) {
                        p.compensated++;
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
                    p.alerts.add(new GapAlert(p.shard, heads.incarnation(), client, db, from, prev));
                    from = seq;
                }
                prev = seq;
                covered.add(seq);
            }
            if (from >= 0) {
                p.alerts.add(new GapAlert(p.shard, heads.incarnation(), client, db, from, prev));
            }
        }
    }

    /** The database client id of a Redis source: {@code <shard>.<incarnation prefix>.<client>}. */
    public static String dbClientId(int shard, String incarnation, String clientId) {
        String inc = incarnation.length() > 8 ? incarnation.substring(0, 8) : incarnation;
        String id = shard + "." + (inc.isEmpty() ? "0" : inc) + "." + clientId;
        return id.length() <= 64
                ? id
                : shard + "." + inc + ".h" + sha256Hex(clientId).substring(0, 40);
    }

    /** The database client id under which usage recovered from month records is numbered. */
    public static String recoveryClientId(int shard) {
        return "recovered." + shard;
    }

    private static String sha256Hex(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The mutable counters of one pass. */
    private final class Pass {
        final int shard;
        final ShardState state;
        int read;
        int recorded;
        int duplicates;
        int resets;
        int compensated;
        int recovered;
        final List<GapAlert> alerts = new ArrayList<>();
        final List<String> orphans = new ArrayList<>();
        final Set<QuotaMonth> months = new HashSet<>();
        /** PID-months of orphaned events: the ledger catches up with their month records. */
        final Set<Map.Entry<String, QuotaMonth>> drifted = new java.util.LinkedHashSet<>();
        /** PID-months whose records still disagree after that catch-up. */
        final List<String> stillDrifting = new ArrayList<>();

        Pass(int shard, ShardState state) {
            this.shard = shard;
            this.state = state;
        }

        /** Writes one event to the database ledger; never throws for content problems (orphans). */
        void apply(UsageEvent e) {
            months.add(e.month());
            String db = dbClientId(shard, e.incarnation(), e.clientId());
            switch (e.kind()) {
                case RESET -> {
                    resets++;
                    state.covered.computeIfAbsent(db, k -> new HashSet<>()).add(e.sequence());
                }
                case DEDUCTION -> applyDeduction(e, db);
                case REFUND -> applyRefund(e, db);
            }
        }

        private void applyDeduction(UsageEvent e, String db) {
            Deduction d = new Deduction(
                    e.deductionId(),
                    e.pid(),
                    db,
                    e.sequence(),
                    e.amount(),
                    e.month().value(),
                    e.appendedAt());
            try {
                if (ledger.recordDeduction(d)) {
                    recorded++;
                } else {
                    duplicates++;
                }
            } catch (PidPoolException ex) {
                if (ex.code() != ErrorCode.CONFLICT) {
                    throw ex;
                }
                Optional<DeductionBalance> stored = ledger.findDeduction(e.deductionId());
                if (stored.isPresent() && sameUsage(stored.get().deduction(), d)) {
                    // recorded from the month records before its event was read: same usage, other numbering
                    duplicates++;
                    state.covered.computeIfAbsent(db, k -> new HashSet<>()).add(e.sequence());
                } else {
                    orphan(e, ex);
                }
            }
        }

        private void applyRefund(UsageEvent e, String db) {
            Refund r = new Refund(e.refundId(), e.deductionId(), db, e.sequence(), e.amount(), e.appendedAt());
            if (alreadyRefunded(r)) {
                duplicates++;
                return;
            }
            try {
                ledger.recordRefund(r);
                recorded++;
            } catch (PidPoolException ex) {
                if (ex.code() == ErrorCode.NOT_FOUND) {
                    // the deduction's event was lost: take the deduction from the month record, then retry
                    if (recoverDeduction(e.pid(), e.month(), e.deductionId())) {
                        ledger.recordRefund(r);
                        recorded++;
                        return;
                    }
                } else if (ex.code() == ErrorCode.CONFLICT && alreadyRefunded(r)) {
                    duplicates++;
                    state.covered.computeIfAbsent(db, k -> new HashSet<>()).add(e.sequence());
                    return;
                }
                if (ex.code() == ErrorCode.UNAVAILABLE) {
                    throw ex;
                }
                orphan(e, ex);
            }
        }

        private boolean alreadyRefunded(Refund r) {
            return ledger.refundsOf(r.deductionId()).stream()
                    .anyMatch(x -> x.id().equals(r.id()) && x.amount() == r.amount());
        }

        private void orphan(UsageEvent e, PidPoolException ex) {
            String what = e.changeKey() + " (seq " + e.sequence() + " of " + e.clientId() + "): " + ex.getMessage();
            LOG.warn("usage shard {}: event not recorded: {}", shard, what);
            orphans.add(what);
            drifted.add(Map.entry(e.pid(), e.month()));
        }

        /**
         * An event the ledger refused leaves the ledger behind Redis: catch up from the month records
         * of every PID-month concerned (what Redis has and the ledger lacks is written under the
         * recovery client), then compare them deduction by deduction; what still differs is reported
         * in {@link SyncReport#stillDrifting()}.
         */
        void reconcileDrift() {
            for (Map.Entry<String, QuotaMonth> pm : drifted) {
                try {
                    recoverMonth(pm.getKey(), pm.getValue());
                } catch (PidPoolException ex) {
                    if (ex.code() == ErrorCode.UNAVAILABLE) {
                        throw ex;
                    }
                    LOG.warn(
                            "usage shard {}: could not catch up {} in {} from Redis: {}",
                            shard,
                            pm.getKey(),
                            pm.getValue(),
                            ex.getMessage());
                }
                Optional<String> difference = difference(pm.getKey(), pm.getValue());
                difference.ifPresent(d -> {
                    LOG.error(
                            "usage shard {}: the ledger still differs from Redis for {} in {}: {}",
                            shard,
                            pm.getKey(),
                            pm.getValue(),
                            d);
                    stillDrifting.add(pm.getKey() + " " + pm.getValue() + ": " + d);
                });
            }
        }

        /** The first deduction whose amount or refunded total differs between Redis and the ledger. */
        private Optional<String> difference(String pid, QuotaMonth month) {
            RMap<String, String> hash = redisson.getMap(keys.usage(pid, month), StringCodec.INSTANCE);
            for (Map.Entry<String, String> f : hash.entrySet(1_000)) {
                if (!f.getKey().startsWith("d:")) {
                    continue;
                }
                String did = f.getKey().substring(2);
                String[] v = f.getValue().split("\\|");
                long amount = Long.parseLong(v[0]);
                long refunded = Long.parseLong(v[3]);
                Optional<DeductionBalance> stored = ledger.findDeduction(did);
                if (stored.isEmpty()) {
                    return Optional.of("deduction " + did + " is not in the ledger");
                }
                DeductionBalance b = stored.get();
                if (!b.deduction().pidId().equals(pid)
                        || b.deduction().amount() != amount
                        || b.refundedTotal() != refunded) {
                    return Optional.of("deduction " + did + ": Redis " + amount + " refunded " + refunded
                            + ", ledger " + b.deduction().pidId() + " "
                            + b.deduction().amount() + " refunded "
                            + b.refundedTotal());
                }
            }
            return Optional.empty();
        }

        /** Step 4: what the month hashes of this shard hold and the database lacks. */
        void recoverFromRecords() {
            Set<QuotaMonth> scan = new HashSet<>(months);
            YearMonth now = YearMonth.now(clock.withZone(ZoneOffset.UTC));
            scan.add(new QuotaMonth(now));
            scan.add(new QuotaMonth(now.minusMonths(1)));
            Set<String> pids = new HashSet<>(redisson.<String, String>getMap(keys.pids(shard), StringCodec.INSTANCE)
                    .keySet(1_000));
            for (QuotaMonth month : scan) {
                Set<String> monthPids = new HashSet<>(pids);
                monthPids.addAll(
                        redisson.<String, String>getMap(keys.deductionIndex(shard, month), StringCodec.INSTANCE)
                                .values(1_000));
                for (String pid : monthPids) {
                    recoverMonth(pid, month);
                }
            }
        }

        private void recoverMonth(String pid, QuotaMonth month) {
            RMap<String, String> hash = redisson.getMap(keys.usage(pid, month), StringCodec.INSTANCE);
            Map<String, String> refunds = new HashMap<>();
            for (Map.Entry<String, String> f : hash.entrySet(1_000)) {
                if (f.getKey().startsWith("d:")) {
                    String did = f.getKey().substring(2);
                    if (ledger.findDeduction(did).isEmpty() && recordRecovered(pid, month, did, f.getValue())) {
                        recovered++;
                    }
                } else if (f.getKey().startsWith("r:")) {
                    refunds.put(f.getKey().substring(2), f.getValue());
                }
            }
            for (Map.Entry<String, String> r : refunds.entrySet()) {
                String[] v = r.getValue().split("\\|");
                String did = v[0];
                long amount = Long.parseLong(v[1]);
                // r:<deductionId>:<refundId>, or r:<refundId> when written before refund ids were
                // scoped to their deduction (ids never contain ':')
                String field = r.getKey();
                String rid = field.startsWith(did + ":") ? field.substring(did.length() + 1) : field;
                boolean known = ledger.refundsOf(did).stream().anyMatch(x -> x.id().equals(rid));
                if (known || ledger.findDeduction(did).isEmpty()) {
                    continue;
                }
                recordWithNextSequence(seq -> ledger.recordRefund(
                        new Refund(rid, did, recoveryClientId(shard), seq, amount, clock.instant())));
                recovered++;
            }
        }

        private boolean recoverDeduction(String pid, QuotaMonth month, String did) {
            String v = redisson.<String, String>getMap(keys.usage(pid, month), StringCodec.INSTANCE)
                    .get("d:" + did);
            if (v == null) {
                return false;
            }
            if (recordRecovered(pid, month, did, v)) {
                recovered++;
            }
            return true;
        }

        /** {@code v} = "amount|usedAfter|limit|refunded"; the refunds are recovered separately. */
        private boolean recordRecovered(String pid, QuotaMonth month, String did, String v) {
            long amount = Long.parseLong(v.substring(0, v.indexOf('|')));
            Instant at = clock.instant();
            try {
                recordWithNextSequence(seq -> ledger.recordDeduction(
                        new Deduction(did, pid, recoveryClientId(shard), seq, amount, month.value(), at)));
                LOG.warn(
                        "usage shard {}: deduction {} of {} in {} recovered from the month record",
                        shard,
                        did,
                        pid,
                        month);
                return true;
            } catch (PidPoolException ex) {
                if (ex.code() == ErrorCode.CONFLICT && ledger.findDeduction(did).isPresent()) {
                    return false; // recorded meanwhile
                }
                throw ex;
            }
        }

        private void recordWithNextSequence(java.util.function.LongConsumer write) {
            String client = recoveryClientId(shard);
            for (int attempt = 0; ; attempt++) {
                long next = ledger.progress(client)
                                .map(SequenceProgress::highestSeen)
                                .orElse(0L)
                        + 1;
                try {
                    write.accept(next);
                    return;
                } catch (PidPoolException ex) {
                    // another process took the number: take the next one (bounded)
                    if (ex.code() != ErrorCode.CONFLICT || !"sequence".equals(ex.field()) || attempt >= 5) {
                        throw ex;
                    }
                }
            }
        }
    }

    private static boolean sameUsage(Deduction a, Deduction b) {
        return a.pidId().equals(b.pidId())
                && a.amount() == b.amount()
                && a.month().equals(b.month());
    }
}
