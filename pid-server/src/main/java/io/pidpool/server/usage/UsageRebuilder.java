package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the database ledger's usage back into the Redis month counters after Redis lost them (a
 * flush, a restart without persistence, a failover to an empty replica).
 *
 * <p>For every PID with usage in the month ({@link UsageLedger#netUsageByPid}) the new counter is
 * the union of both sides, Redis winning for deductions it still knows:
 *
 * <pre>
 *   used := dbNet + Σ over d:&lt;id&gt; in the Redis month hash of (redisNet(id) − dbNet(id))
 * </pre>
 *
 * where {@code dbNet(id)} is 0 for a deduction the database has not received yet. So deductions made
 * on the new Redis after the loss (not yet synced, or synced) count once, refunds Redis applied but
 * the database has not yet count, and everything the database has from before the loss counts. The
 * counter is written by a compare-and-set script of this class on {@code used} only (the key layout
 * is {@link RedissonQuotaLedger}'s: {@link QuotaKeys#usage}), retried when a deduction came in between;
 * so running it while permits are granted is safe, and running it twice changes nothing.
 *
 * <p>Not restored: the {@code d:<id>} records of deductions from before the loss. A refund by id of
 * such a permit therefore answers "unknown deduction" on the new Redis (see docs/usage-sync.md).
 */
public final class UsageRebuilder {
    private static final Logger LOG = LoggerFactory.getLogger(UsageRebuilder.class);
    private static final int MAX_CAS_ATTEMPTS = 50;
    private static final String CAS = "local used = redis.call('HGET', KEYS[1], 'used') or '0'\n"
            + "if used ~= ARGV[1] then return 0 end\n"
            + "redis.call('HSET', KEYS[1], 'used', ARGV[2])\n"
            + "redis.call('EXPIREAT', KEYS[1], ARGV[3])\n"
            + "return 1\n";

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final UsageLedger ledger;
    private final Clock clock;
    private final Duration retention;
    private final UsageLedgerSync sync;

    /** A rebuilder that holds {@code sync}'s shard lock while it computes a PID's counter. */
    public UsageRebuilder(RedissonClient redisson, UsageLedgerSync sync, UsageLedger ledger, Clock clock) {
        this(redisson, sync.keys(), ledger, clock, RedissonQuotaLedger.DEFAULT_RETENTION, sync);
    }

    /**
     * {@code retention} must be the ledger's ({@link RedissonQuotaLedger.Builder#retention}); {@code
     * sync}, if not null, is this process's sync, whose shard lock is held while a PID's counter is
     * computed, so this process does not change the database under the computation.
     */
    public UsageRebuilder(
            RedissonClient redisson,
            QuotaKeys keys,
            UsageLedger ledger,
            Clock clock,
            Duration retention,
            UsageLedgerSync sync) {
        this.redisson = requireNonNull(redisson, "redisson");
        this.keys = requireNonNull(keys, "keys");
        this.ledger = requireNonNull(ledger, "ledger");
        this.clock = requireNonNull(clock, "clock");
        this.retention = requireNonNull(retention, "retention");
        this.sync = sync;
    }

    /** What a rebuild did: PIDs looked at, counters changed, and the counters after it. */
    public record Report(QuotaMonth month, int pids, int changed, Map<String, Long> usedAfter) {}

    /**
     * Rebuilds the counters of {@code month}. Run it after the sync has passed over the shards once
     * (the database then has whatever the new Redis streams held); it is correct either way.
     */
    public Report rebuild(QuotaMonth month) {
        requireNonNull(month, "month");
        Map<String, Long> byPid = ledger.netUsageByPid(month.value());
        Map<String, Long> after = new java.util.TreeMap<>();
        int changed = 0;
        for (Map.Entry<String, Long> e : byPid.entrySet()) {
            String pid = e.getKey();
            long[] result = sync == null
                    ? rebuildPid(pid, month)
                    : sync.underShardLock(keys.shardOf(pid), () -> rebuildPid(pid, month));
            after.put(e.getKey(), result[1]);
            if (result[0] != result[1]) {
                changed++;
            }
        }
        LOG.info("usage counters of {} rebuilt from the database: {} PIDs, {} changed", month, byPid.size(), changed);
        return new Report(month, byPid.size(), changed, after);
    }

    /** Returns {before, after}. */
    private long[] rebuildPid(String pid, QuotaMonth month) {
        String key = keys.usage(pid, month);
        long dbNet = ledger.netUsage(pid, month.value());
        Map<String, Long> dbNetById = new java.util.HashMap<>();
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        for (int attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
            Map<String, String> hash;
            try {
                hash = redisson.<String, String>getMap(key, StringCodec.INSTANCE)
                        .readAllMap();
            } catch (RedisException ex) {
                throw PidPoolException.unavailable("redis: reading " + key, ex);
            }
            String usedNow = hash.getOrDefault("used", "0");
            long target = dbNet;
            for (Map.Entry<String, String> f : hash.entrySet()) {
                if (!f.getKey().startsWith("d:")) {
                    continue;
                }
                String[] v = f.getValue().split("\\|");
                long redisNet = Long.parseLong(v[0]) - Long.parseLong(v[3]);
                long dbNetOfId = dbNetById.computeIfAbsent(f.getKey().substring(2), id -> ledger.findDeduction(id)
                        .map(DeductionBalance::net)
                        .orElse(0L));
                target += redisNet - dbNetOfId;
            }
            long before = Long.parseLong(usedNow);
            if (target == before) {
                return new long[] {before, target};
            }
            Long ok;
            try {
                ok = script.eval(
                        key,
                        RScript.Mode.READ_WRITE,
                        CAS,
                        RScript.ReturnType.INTEGER,
                        List.of(key),
                        usedNow,
                        Long.toString(target),
                        expireAt(month));
            } catch (RedisException ex) {
                throw PidPoolException.unavailable("redis: rebuilding " + key, ex);
            }
            if (ok != null && ok == 1) {
                return new long[] {before, target};
            }
        }
        throw PidPoolException.illegalState(
                "usage counter %s kept changing during %d rebuild attempts", key, MAX_CAS_ATTEMPTS);
    }

    /** The same expiry rule as the ledger's writes. */
    private String expireAt(QuotaMonth month) {
        return QuotaKeys.expireAt(month, clock.instant(), retention);
    }
}
