package io.pidpool.server.redis;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Names;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.leader.QuotaProvisioner;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's {@link QuotaProvisioner} on the Redis quota ledger ({@link RedissonQuotaLedger}, the
 * same scripts and keys the SDK's {@code tryAcquire} uses):
 *
 * <ul>
 *   <li>{@link #setLimits}: {@code ledger.setLimits(limits, epoch)}, pipelined: per PID one script
 *       that refuses a leader epoch older than the shard's, then the near-cache invalidation
 *       broadcast (clients see a raised limit at once); {@link #fenceLimits}: the new term's epoch recorded in every shard;
 *   <li>{@link #reset}: {@code ledger.reset(pid, month)} with the month of the given instant in the
 *       cluster's quota zone ({@link MonthlyWindow}; default UTC, which is what the SDK uses);
 *   <li>{@link #limits}: every shard's {@code pids} hash read in one pipelined round trip ({@code
 *       HGETALL} per shard), the {@code limit|epoch} values parsed, a malformed one as {@code -1}.
 * </ul>
 *
 * <p>The ledger is built on first use, so a server starts while Redis is down; until Redis answers
 * every call fails {@code UNAVAILABLE} and the leader retries. Built from a ready ledger ({@link
 * Builder#ledger}), the ledger is the caller's.
 *
 * <p>Concurrency: thread-safe; the Redisson client belongs to the caller and is never shut down here.
 */
public final class RedisQuotaProvisioner implements QuotaProvisioner, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RedisQuotaProvisioner.class);

    private final RedissonClient redisson;
    private final String cluster;
    private final int shards;
    private final String clientId;
    private final MonthlyWindow window;
    private final boolean ownsLedger;
    private RedissonQuotaLedger ledger; // guarded by this
    private boolean closed; // guarded by this

    private RedisQuotaProvisioner(Builder b) {
        this.redisson = b.redisson;
        this.cluster = b.cluster;
        this.shards = b.shards;
        this.clientId = b.clientId;
        this.window = new MonthlyWindow(b.zone);
        this.ledger = b.ledger;
        this.ownsLedger = b.ledger == null;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The quota zone's window: which month a reset at a given instant clears. */
    public MonthlyWindow window() {
        return window;
    }

    /** The ledger, built now if it was not yet (throws {@code UNAVAILABLE} while Redis is down). */
    public synchronized RedissonQuotaLedger ledger() {
        if (closed) {
            throw PidPoolException.unavailable("the quota provisioner is closed", null);
        }
        if (ledger == null) {
            ledger = RedissonQuotaLedger.builder()
                    .redisson(redisson)
                    .cluster(cluster)
                    .shards(shards)
                    .clientId(clientId)
                    .build();
            log.info("quota ledger for cluster {} ready ({} shards)", cluster, shards);
        }
        return ledger;
    }

    @Override
    public void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
        ledger().setLimits(hardLimits, leaderEpoch);
    }

    @Override
    public void fenceLimits(Epoch leaderEpoch) {
        ledger().fenceLimits(leaderEpoch);
    }

    @Override
    public void reset(Collection<String> pidIds, Instant at) {
        RedissonQuotaLedger l = ledger();
        QuotaMonth month = window.monthOf(at);
        for (String pid : pidIds) {
            l.reset(pid, month);
        }
    }

    @Override
    public boolean resetOnce(String pidId, long generation, Instant at) {
        return ledger().resetOnce(pidId, window.monthOf(at), generation);
    }

    @Override
    public Map<String, Long> resetGenerations() {
        QuotaKeys keys = ledger().keys();
        RBatch batch = redisson.createBatch();
        for (int shard = 0; shard < keys.shards(); shard++) {
            RFuture<Map<String, String>> ignored = batch.<String, String>getMap(
                            keys.resetGenerations(shard), StringCodec.INSTANCE)
                    .readAllMapAsync();
        }
        BatchResult<?> done;
        try {
            done = batch.execute();
        } catch (RuntimeException e) {
            throw PidPoolException.unavailable("could not read the reset generations of cluster " + cluster, e);
        }
        Map<String, Long> generations = new HashMap<>();
        for (Object reply : done.getResponses()) {
            if (reply instanceof Map<?, ?> entries) {
                entries.forEach((pid, value) -> {
                    try {
                        generations.put(String.valueOf(pid), Long.parseLong(String.valueOf(value)));
                    } catch (NumberFormatException e) {
                        generations.put(String.valueOf(pid), 0L); // malformed: re-applied (the script rewrites it)
                    }
                });
            }
        }
        return generations;
    }

    @Override
    public Map<String, Long> limits() {
        QuotaKeys keys = ledger().keys();
        RBatch batch = redisson.createBatch();
        List<RFuture<Map<String, String>>> reads = new ArrayList<>(keys.shards());
        for (int shard = 0; shard < keys.shards(); shard++) {
            reads.add(batch.<String, String>getMap(keys.pids(shard), StringCodec.INSTANCE)
                    .readAllMapAsync());
        }
        BatchResult<?> done;
        try {
            done = batch.execute();
        } catch (RuntimeException e) {
            throw PidPoolException.unavailable("could not read the quota limits of cluster " + cluster, e);
        }
        Map<String, Long> limits = new HashMap<>();
        for (Object reply : done.getResponses()) {
            if (reply instanceof Map<?, ?> entries) {
                entries.forEach((pid, value) -> limits.put(String.valueOf(pid), parseLimit(String.valueOf(value))));
            }
        }
        return limits;
    }

    /** The limit of a {@code limit|epoch} entry, or -1 if malformed (the ledger grants nothing then). */
    static long parseLimit(String value) {
        int bar = value.indexOf('|');
        try {
            long limit = Long.parseLong(bar < 0 ? value : value.substring(0, bar));
            return limit < 0 ? -1 : limit;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Closes the ledger's near cache if this provisioner built the ledger. */
    @Override
    public synchronized void close() {
        closed = true;
        if (ownsLedger && ledger != null) {
            ledger.close();
        }
        ledger = null;
    }

    @Override
    public String toString() {
        return "RedisQuotaProvisioner[cluster=" + cluster + ", zone=" + window.zone() + "]";
    }

    /** Builds a {@link RedisQuotaProvisioner}. Not thread-safe. */
    public static final class Builder {
        private RedissonClient redisson;
        private String cluster = "default";
        private int shards = QuotaKeys.DEFAULT_SHARDS;
        private String clientId = "leader";
        private ZoneId zone = ZoneOffset.UTC;
        private RedissonQuotaLedger ledger;

        private Builder() {}

        /** Required; owned by the caller. Use {@code StringCodec} (the ledger's values are strings). */
        public Builder redisson(RedissonClient value) {
            this.redisson = requireNonNull(value, "redisson");
            return this;
        }

        /** The PidPool cluster name (the SDK's {@code cluster}); default {@code default}. */
        public Builder cluster(String value) {
            this.cluster = Names.requireToken(value, "cluster");
            return this;
        }

        /** The cluster's shard count, the same as every SDK's; default 16. */
        public Builder shards(int value) {
            requireArgument(
                    value >= 1 && value <= QuotaKeys.MAX_SHARDS,
                    "shards",
                    "must be within 1..%d",
                    QuotaKeys.MAX_SHARDS);
            this.shards = value;
            return this;
        }

        /** Who reset events are attributed to, e.g. {@code leader-<nodeId>}; default {@code leader}. */
        public Builder clientId(String value) {
            this.clientId = Names.requireToken(value, "clientId");
            return this;
        }

        /** The cluster's quota zone; default UTC (the SDK's). */
        public Builder zone(ZoneId value) {
            this.zone = requireNonNull(value, "zone");
            return this;
        }

        /** A ready ledger instead of building one (its cluster and shards win; it stays the caller's). */
        public Builder ledger(RedissonQuotaLedger value) {
            this.ledger = requireNonNull(value, "ledger");
            return this;
        }

        public RedisQuotaProvisioner build() {
            requireNonNull(redisson, "redisson");
            if (ledger != null) {
                cluster = ledger.keys().cluster();
                shards = ledger.keys().shards();
            }
            return new RedisQuotaProvisioner(this);
        }
    }
}
