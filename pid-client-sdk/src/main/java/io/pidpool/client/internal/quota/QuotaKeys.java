package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import io.pidpool.core.quota.QuotaMonth;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.zip.CRC32;

/**
 * The Redis key layout of the quota ledger. Every key a script touches carries the hash tag of one
 * <em>shard</em>, {@code {<cluster>:<shard>}}, so one script only ever touches one Redis Cluster slot:
 *
 * <pre>
 * pidpool:{c:s}:pids                 hash  pid -> "limit|epoch"   (RLocalCachedMap "near cache" backing)
 * pidpool:{c:s}:pids:topic           its invalidation channel (named by Redisson)
 * pidpool:{c:s}:u:&lt;pid&gt;:&lt;yyyy-MM&gt;   hash  used, d:&lt;deductionId&gt;, r:&lt;refundId&gt;  (one PID, one month)
 * pidpool:{c:s}:ix:&lt;yyyy-MM&gt;         hash  deductionId -> pid  (permit deductions only, for refund by id)
 * pidpool:{c:s}:events               stream of deductions, refunds and resets (the usage event log)
 * pidpool:{c:s}:seq                  hash  clientId -> last sequence number; "~inc" -> incarnation
 * pidpool:{c:s}:offsets              hash  consumer -> last acknowledged stream entry id
 * pidpool:{c:s}:leader               string the highest leader epoch that wrote a limit in the shard
 * pidpool:{c}:layout                 string "shards=&lt;n&gt;" (checked at start: all processes must agree)
 * </pre>
 *
 * A PID belongs to shard {@code crc32(pid) mod shards}. Why shards and not one hash tag per PID: the
 * usage event of a deduction must be appended in the same script as the deduction (so it exists iff
 * the deduction does), and a script can touch one slot only; with a tag per PID the log would be
 * 100,000 streams that no reader can follow. A fixed number of shards gives a fixed number of streams
 * (the sharded Redis with one writer per shard) and still spreads the slots over a cluster.
 * The shard count is part of the data layout: changing it needs a migration, so {@link
 * RedissonQuotaLedger} refuses to start when Redis records another count.
 *
 * <p>Immutable and thread-safe.
 */
public final class QuotaKeys {
    public static final String PREFIX = "pidpool";
    public static final int DEFAULT_SHARDS = 16;
    public static final int MAX_SHARDS = 1024;

    private final String cluster;
    private final int shards;
    private final String[] tags;
    private static final int SHARD_CACHE_LIMIT = 4096;
    private final java.util.concurrent.ConcurrentHashMap<String, Integer> shardCache =
            new java.util.concurrent.ConcurrentHashMap<>();

    public QuotaKeys(String cluster, int shards) {
        this.cluster = Names.requireToken(cluster, "cluster");
        requireArgument(
                shards >= 1 && shards <= MAX_SHARDS,
                "shards",
                "shards must be within 1..%d, was %d",
                MAX_SHARDS,
                shards);
        this.shards = shards;
        this.tags = new String[shards];
        for (int s = 0; s < shards; s++) {
            tags[s] = PREFIX + ":{" + cluster + ":" + s + "}:";
        }
    }

    public String cluster() {
        return cluster;
    }

    public int shards() {
        return shards;
    }

    /** The shard of {@code pid}: {@code crc32(utf8(pid)) mod shards}, the same in every process. */
    public int shardOf(String pid) {
        Integer known = shardCache.get(pid);
        if (known != null) {
            return known;
        }
        int shard = computeShard(pid);
        if (shardCache.size() < SHARD_CACHE_LIMIT) {
            shardCache.put(pid, shard); // the PIDs a client deducts on are few; bounded for admin use
        }
        return shard;
    }

    private int computeShard(String pid) {
        CRC32 crc = new CRC32();
        crc.update(pid.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % shards);
    }

    /** {@code pidpool:{<cluster>:<shard>}:}, the prefix of every key of the shard. */
    public String shardPrefix(int shard) {
        requireShard(shard);
        return tags[shard];
    }

    /** The shard's PID hash, pid -> "limit|epoch"; also the near cache's backing map. */
    public String pids(int shard) {
        return shardPrefix(shard) + "pids";
    }

    /** One PID's usage in one month. */
    public String usage(String pid, QuotaMonth month) {
        requireNonNull(month, "month");
        return shardPrefix(shardOf(pid)) + "u:" + pid + ":" + month.key();
    }

    /** The shard's index of permit deductions made in {@code month}: deductionId -> pid. */
    public String deductionIndex(int shard, QuotaMonth month) {
        return shardPrefix(shard) + "ix:" + month.key();
    }

    /** The shard's usage event stream. */
    public String events(int shard) {
        return shardPrefix(shard) + "events";
    }

    /** The shard's per-client sequence counters. */
    public String sequences(int shard) {
        return shardPrefix(shard) + "seq";
    }

    /**
     * The shard's reset generations, pid -> the highest RESET_QUOTA generation applied (the server's
     * durable resets; {@link RedissonQuotaLedger#resetOnce}).
     */
    public String resetGenerations(int shard) {
        return shardPrefix(shard) + "rg";
    }

    /**
     * The highest leader epoch that wrote a limit in the shard or fenced it: {@code set_limit} refuses a
     * write of an older one ({@link RedissonQuotaLedger#setLimit(String, long, io.pidpool.core.model.Epoch)}).
     */
    public String leaderEpoch(int shard) {
        return shardPrefix(shard) + "leader";
    }

    /** The shard's consumer offsets. */
    public String offsets(int shard) {
        return shardPrefix(shard) + "offsets";
    }

    /** The cluster's layout record (not in any shard). */
    public String layout() {
        return PREFIX + ":{" + cluster + "}:layout";
    }

    /** A pattern matching every key of this cluster, for tests and tooling that drop a cluster. */
    public String allKeysPattern() {
        return PREFIX + ":{" + cluster + "[:}]*";
    }

    int requireShard(int shard) {
        requireArgument(shard >= 0 && shard < shards, "shard", "shard must be within 0..%d, was %d", shards - 1, shard);
        return shard;
    }

    @Override
    public String toString() {
        return "QuotaKeys[cluster=" + cluster + ", shards=" + shards + "]";
    }

    /**
     * Unix seconds at which a month's keys expire: {@code retention} after the later of the month's
     * end and {@code now}. The month's end in UTC plus a day covers every zone a monthly window may use.
     */
    public static String expireAt(QuotaMonth month, Instant now, Duration retention) {
        Instant end = month.next()
                .value()
                .atDay(1)
                .atStartOfDay()
                .toInstant(ZoneOffset.UTC)
                .plus(Duration.ofDays(1));
        Instant base = end.isAfter(now) ? end : now;
        return Long.toString(base.plus(retention).getEpochSecond());
    }
}
