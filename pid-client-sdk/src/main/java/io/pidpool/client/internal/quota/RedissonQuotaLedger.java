package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaScripts.Call;
import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.QuotaLedger;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.DeductResult.AlreadyGranted;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.LocalCachedMapOptions.ReconnectionStrategy;

/**
 * The {@link QuotaLedger} in Redis, through Redisson: every operation is one Lua script (see {@code
 * docs/quota.md} and {@link QuotaKeys} for the key layout), so each call is atomic against every
 * other call from any process, and nothing is read, changed in Java and written back.
 *
 * <ul>
 *   <li>A deduction or refund record lives in the PID's month hash under its id ({@code d:<id>} with
 *       amount, usage after, limit and refunded total; {@code r:<id>} with its deduction, amount and
 *       answer), so a retry with the same id and content answers like the first time, and other
 *       content is a conflict (refund rule 4, also for deductions).
 *   <li>Every deduction, refund and reset that changes the ledger appends one event to the shard's
 *       stream in the same script, numbered by this client's per-shard sequence ({@link UsageEventLog}).
 *   <li>Month hashes expire {@code retention} after the later of the month's end and the last write
 *       to them.
 *   <li>Values are plain strings ({@code StringCodec}); nothing is serialized with Kryo or Java
 *       serialization, so redis-cli and other languages read the same data.
 * </ul>
 *
 * Beyond the port it offers pipelined deductions ({@link #tryDeductAll}), permit-deduction lookup by
 * id ({@link #pidOfDeduction}) and the client's {@link QuotaNearCache}, fed by every script answer.
 *
 * <p><b>Parts.</b> {@link ScriptReplies} reads the scripts' answers; {@link BatchDeductScript} sends
 * many deductions as batch-script runs ({@link DeductBatch}); {@link BroadcastWrites} writes limits
 * and resets and tells every near cache; {@link WriteStamps} is what every writing script carries.
 * What stays here is the port, one short method per script call, and its {@link Builder} (a quarter
 * of the file, every option with its bounds and default).
 *
 * <p><b>Errors.</b> Bad input: {@code INVALID_ARGUMENT} naming the field, nothing sent to Redis.
 * Redis unreachable or timing out: {@code UNAVAILABLE}; the call may or may not have taken effect,
 * and repeating it with the same ids is safe (this is also what makes Redisson's own retries safe).
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free on the Java side; Redis serializes the scripts.
 * The Redisson client belongs to the caller and is not closed by {@link #close()}.
 */
public final class RedissonQuotaLedger implements QuotaLedger, AutoCloseable {
    public static final Duration DEFAULT_RETENTION = Duration.ofDays(100);
    public static final Duration DEFAULT_OBSERVATION_MAX_AGE = Duration.ofSeconds(1);
    public static final Duration DEFAULT_META_TTL = Duration.ofSeconds(10);

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final String clientId;
    private final WriteStamps stamps;
    private final QuotaScripts scripts;
    private final QuotaNearCache nearCache;
    private final ScriptReplies answers;
    private final BatchDeductScript batches;
    private final BroadcastWrites writes;
    private final UsageEventLog events;

    private RedissonQuotaLedger(Builder b) {
        this.redisson = requireNonNull(b.redisson, "redisson");
        this.keys = new QuotaKeys(b.cluster, b.shards);
        this.clientId = Names.requireToken(b.clientId, "clientId");
        this.stamps = new WriteStamps(clientId, b.clock, b.retention);
        this.scripts = new QuotaScripts(redisson);
        this.nearCache =
                new QuotaNearCache(redisson, keys, b.ticker, b.maxObservationAge, b.metaTtl, b.reconnectionStrategy);
        this.answers = new ScriptReplies(nearCache);
        this.batches = new BatchDeductScript(keys, scripts, answers, stamps);
        this.writes = new BroadcastWrites(keys, scripts, nearCache, stamps);
        this.events = new UsageEventLog(keys, scripts);
    }

    public static Builder builder() {
        return new Builder();
    }

    public QuotaKeys keys() {
        return keys;
    }

    /** Who this ledger's events are attributed to; a {@link Names} token. */
    public String clientId() {
        return clientId;
    }

    public QuotaNearCache nearCache() {
        return nearCache;
    }

    /** The usage event log of this ledger's cluster. */
    public UsageEventLog events() {
        return events;
    }

    // ---- deductions

    @Override
    public DeductResult tryDeduct(String pid, QuotaMonth month, long amount, String deductionId) {
        return tryDeduct(new DeductRequest(pid, month, amount, deductionId, false));
    }

    /** One deduction, one script. */
    public DeductResult tryDeduct(DeductRequest r) {
        Call call = deductCall(r);
        return answers.deduct(r, scripts.run(call.script(), call.keys(), call.args()), 0);
    }

    /**
     * {@link #tryDeduct(DeductRequest)} bounded in time: Redisson gives the call up after {@code
     * timeout} without a retry of its own, so nothing of it lingers in Redisson's queues after the
     * returned future failed. Completes on a Redisson thread (translate nothing there); fails with
     * {@code UNAVAILABLE} when Redis did not answer in time (the deduction may or may not have
     * happened; sending the same request again is safe).
     */
    public CompletableFuture<DeductResult> tryDeductAsync(DeductRequest r, Duration timeout) {
        Call call = deductCall(r);
        return scripts.runBoundedAsync(call, timeout).handle((reply, error) -> {
            if (error != null) {
                throw QuotaScripts.failure("running script deduct.lua", error);
            }
            return answers.deduct(r, reply, 0);
        });
    }

    private Call deductCall(DeductRequest r) {
        requireNonNull(r, "request");
        int shard = keys.shardOf(r.pid());
        List<Object> k = new ArrayList<>(5);
        k.add(keys.pids(shard));
        k.add(keys.usage(r.pid(), r.month()));
        k.add(keys.events(shard));
        k.add(keys.sequences(shard));
        if (r.indexed()) {
            k.add(keys.deductionIndex(shard, r.month()));
        }
        Object[] args = {
            r.pid(),
            r.month().key(),
            r.deductionId(),
            Long.toString(r.amount()),
            stamps.expireAt(r.month()),
            stamps.clientId(),
            WriteStamps.incarnation()
        };
        return new Call(Script.DEDUCT, k, args);
    }

    /**
     * A cheap read (EXISTS of shard 0's PID hash) that Redisson gives up on after {@code timeout}
     * without retrying: completes normally iff Redis answered. What the permit circuit probes with.
     */
    public CompletableFuture<Void> probeAsync(Duration timeout) {
        return redisson.<String>getBucket(org.redisson.api.options.PlainOptions.name(keys.pids(0))
                        .codec(org.redisson.client.codec.StringCodec.INSTANCE)
                        .timeout(timeout)
                        .retryAttempts(0))
                .isExistsAsync()
                .toCompletableFuture()
                .thenApply(exists -> null);
    }

    /**
     * Many deductions in one round trip. On a single Redis (or master with replicas, Sentinel) that is
     * <em>one</em> run of the batch script for all of them, grouped by shard inside; on Redis Cluster
     * one run per shard (a script's keys must share a hash tag), pipelined in one Redisson {@link
     * org.redisson.api.RBatch}. Each deduction is decided exactly as by {@link
     * #tryDeduct(DeductRequest)} — check and deduct atomic per deduction, one usage event each — in list
     * order within a shard; a deduction id repeated in the list answers {@link AlreadyGranted} the
     * second time. Returns the answers in the order asked.
     */
    public List<DeductResult> tryDeductAll(List<DeductRequest> requests) {
        requireNonNull(requests, "requests");
        if (requests.isEmpty()) {
            return List.of();
        }
        DeductBatch batch = sendDeductAll(requests);
        try {
            batch.replies().join();
        } catch (java.util.concurrent.CompletionException e) {
            // decode() translates the failure
        }
        return batch.decode();
    }

    /**
     * {@link #tryDeductAll} without waiting: the deductions are on their way when this returns; {@link
     * DeductBatch#replies()} completes on a Redisson thread (do not call Redisson synchronously from
     * its callbacks), and {@link DeductBatch#decode()} turns the replies into answers on any other
     * thread.
     */
    public DeductBatch sendDeductAll(List<DeductRequest> requests) {
        return sendDeductAll(requests, null);
    }

    /**
     * {@link #sendDeductAll(List)} given up by Redisson itself after {@code timeout}, without a retry
     * of its own ({@code null}: the client's configured timeout and retries).
     */
    public DeductBatch sendDeductAll(List<DeductRequest> requests, Duration timeout) {
        return batches.send(requests, timeout);
    }

    // ---- refunds

    @Override
    public RefundResult refund(String pid, QuotaMonth month, String deductionId, String refundId, long amount) {
        Call call = refundCall(pid, month, deductionId, refundId, amount);
        List<Object> reply = scripts.run(call.script(), call.keys(), call.args());
        return answers.refund(pid, month, deductionId, refundId, amount, reply);
    }

    /**
     * {@link #refund} given up by Redisson itself after {@code timeout}, without a retry of its own
     * (nothing of it lingers in Redisson's queues once the future failed). Completes on a Redisson
     * thread; fails with {@code UNAVAILABLE} when Redis did not answer in time (the refund may or may
     * not have been applied; sending the same refund again is safe, it answers its first result).
     */
    public CompletableFuture<RefundResult> refundAsync(
            String pid, QuotaMonth month, String deductionId, String refundId, long amount, Duration timeout) {
        Call call = refundCall(pid, month, deductionId, refundId, amount);
        return scripts.runBoundedAsync(call, timeout).handle((reply, error) -> {
            if (error != null) {
                throw QuotaScripts.failure("running script refund.lua", error);
            }
            return answers.refund(pid, month, deductionId, refundId, amount, reply);
        });
    }

    private Call refundCall(String pid, QuotaMonth month, String deductionId, String refundId, long amount) {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        Names.requireToken(deductionId, "deductionId");
        Names.requireToken(refundId, "refundId");
        MonthLedger.requireAmount(amount);
        int shard = keys.shardOf(pid);
        return new Call(
                Script.REFUND,
                List.of(keys.pids(shard), keys.usage(pid, month), keys.events(shard), keys.sequences(shard)),
                new Object[] {
                    pid,
                    month.key(),
                    deductionId,
                    refundId,
                    Long.toString(amount),
                    stamps.expireAt(month),
                    stamps.clientId(),
                    WriteStamps.incarnation()
                });
    }

    /**
     * The PID of a deduction made with {@link DeductRequest#indexed()} in {@code month} on {@code
     * shard}, if Redis still has it (index entries expire with the month's data).
     */
    public Optional<String> pidOfDeduction(int shard, QuotaMonth month, String deductionId) {
        keys.requireShard(shard);
        requireNonNull(month, "month");
        Names.requireToken(deductionId, "deductionId");
        Object pid = scripts.runValue(Script.INDEX_LOOKUP, List.of(keys.deductionIndex(shard, month)), deductionId);
        return pid instanceof String s ? Optional.of(s) : Optional.empty();
    }

    /** {@link #pidOfDeduction} given up by Redisson itself after {@code timeout}, like {@link #refundAsync}. */
    public CompletableFuture<Optional<String>> pidOfDeductionAsync(
            int shard, QuotaMonth month, String deductionId, Duration timeout) {
        keys.requireShard(shard);
        requireNonNull(month, "month");
        Names.requireToken(deductionId, "deductionId");
        Call call =
                new Call(Script.INDEX_LOOKUP, List.of(keys.deductionIndex(shard, month)), new Object[] {deductionId});
        return scripts.runBoundedValueAsync(call, timeout).handle((pid, error) -> {
            if (error != null) {
                throw QuotaScripts.failure("running script index_lookup.lua", error);
            }
            return pid instanceof String s ? Optional.<String>of(s) : Optional.<String>empty();
        });
    }

    // ---- reads and operator writes

    @Override
    public QuotaUsage usage(String pid, QuotaMonth month) {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        int shard = keys.shardOf(pid);
        List<Object> reply = scripts.run(Script.USAGE, List.of(keys.pids(shard), keys.usage(pid, month)), pid);
        return answers.usage(pid, month, reply);
    }

    /** See {@link BroadcastWrites#setLimit(String, long)}. */
    @Override
    public void setLimit(String pid, long hardLimit) {
        writes.setLimit(pid, hardLimit);
    }

    /**
     * See {@link BroadcastWrites#setLimit(String, long, Epoch)}.
     *
     * @throws PidPoolException {@code FENCED} if a newer leader wrote a limit in the PID's shard or fenced
     *     it (nothing changes)
     */
    @Override
    public void setLimit(String pid, long hardLimit, Epoch leaderEpoch) {
        writes.setLimit(pid, hardLimit, leaderEpoch);
    }

    /** See {@link BroadcastWrites#setLimits}. */
    public void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
        writes.setLimits(hardLimits, leaderEpoch);
    }

    /** Records {@code leaderEpoch} in every shard (one script run per shard); FENCED if one saw a newer one. */
    @Override
    public void fenceLimits(Epoch leaderEpoch) {
        writes.fenceLimits(leaderEpoch);
    }

    /** See {@link BroadcastWrites#reset}. */
    @Override
    public void reset(String pid, QuotaMonth month) {
        writes.reset(pid, month);
    }

    /** See {@link BroadcastWrites#resetOnce}. */
    public boolean resetOnce(String pid, QuotaMonth month, long generation) {
        return writes.resetOnce(pid, month, generation);
    }

    /** Checks (and on first use records) the shard count in Redis; all processes must agree. */
    RedissonQuotaLedger start() {
        scripts.loadAll();
        String mine = "shards=" + keys.shards();
        String recorded = scripts.runValue(Script.LAYOUT, List.of(keys.layout()), mine);
        if (!mine.equals(recorded)) {
            throw PidPoolException.illegalState(
                    "cluster %s is laid out in Redis as '%s' but this process uses '%s': every process of a"
                            + " cluster must use the same shard count",
                    keys.cluster(), recorded, mine);
        }
        return this;
    }

    /** Releases the near cache's local maps and subscriptions; the Redisson client stays open. */
    @Override
    public void close() {
        nearCache.close();
    }

    @Override
    public String toString() {
        return "RedissonQuotaLedger[" + keys + ", client=" + clientId + "]";
    }

    /** Builds a {@link RedissonQuotaLedger}. Not thread-safe; use it on one thread and drop it. */
    public static final class Builder {
        private RedissonClient redisson;
        private String cluster = "default";
        private int shards = QuotaKeys.DEFAULT_SHARDS;
        private String clientId;
        private Clock clock = Clock.systemUTC();
        private Ticker ticker = Ticker.system();
        private Duration retention = DEFAULT_RETENTION;
        private Duration maxObservationAge = DEFAULT_OBSERVATION_MAX_AGE;
        private Duration metaTtl = DEFAULT_META_TTL;
        private ReconnectionStrategy reconnectionStrategy = ReconnectionStrategy.CLEAR;

        private Builder() {}

        /** Required; owned by the caller. */
        public Builder redisson(RedissonClient redisson) {
            this.redisson = requireNonNull(redisson, "redisson");
            return this;
        }

        /** The PidPool cluster name (a {@link Names} token); default {@code default}. */
        public Builder cluster(String cluster) {
            this.cluster = Names.requireToken(cluster, "cluster");
            return this;
        }

        /** Number of shards (1..1024), the same in every process of the cluster; default 16. */
        public Builder shards(int shards) {
            this.shards = shards;
            return this;
        }

        /** Required: who the events of this ledger are attributed to (e.g. the instance id). */
        public Builder clientId(String clientId) {
            this.clientId = Names.requireToken(clientId, "clientId");
            return this;
        }

        /** Wall clock for key expiry; default UTC system clock. */
        public Builder clock(Clock clock) {
            this.clock = requireNonNull(clock, "clock");
            return this;
        }

        /** Monotonic time for the near cache's observation age; default {@link Ticker#system()}. */
        public Builder ticker(Ticker ticker) {
            this.ticker = requireNonNull(ticker, "ticker");
            return this;
        }

        /** How long month keys outlive the month (and the last write); default 100 days. */
        public Builder retention(Duration retention) {
            requireNonNull(retention, "retention");
            requireArgument(retention.compareTo(Duration.ofDays(1)) >= 0, "retention", "retention must be >= 1 day");
            this.retention = retention;
            return this;
        }

        /** How long a script's answer may be trusted to say "not enough" locally; default 1 s. */
        public Builder maxObservationAge(Duration maxObservationAge) {
            requireNonNull(maxObservationAge, "maxObservationAge");
            requireArgument(!maxObservationAge.isNegative(), "maxObservationAge", "must be >= 0");
            this.maxObservationAge = maxObservationAge;
            return this;
        }

        /** How long the near cache keeps a PID's limit entry without hearing from Redis; default 10 s. */
        public Builder metaTtl(Duration metaTtl) {
            requireNonNull(metaTtl, "metaTtl");
            requireArgument(!metaTtl.isNegative() && !metaTtl.isZero(), "metaTtl", "must be > 0");
            this.metaTtl = metaTtl;
            return this;
        }

        /**
         * What the near cache does when its subscription comes back after a disconnect; default (and
         * the only safe choice) {@link ReconnectionStrategy#CLEAR}. Tests set {@code NONE} to show why.
         */
        Builder reconnectionStrategy(ReconnectionStrategy strategy) {
            this.reconnectionStrategy = requireNonNull(strategy, "reconnectionStrategy");
            return this;
        }

        /**
         * Builds the ledger, loads its scripts and checks the cluster's shard count in Redis.
         *
         * @throws PidPoolException {@code UNAVAILABLE} when Redis cannot be reached, {@code
         *     ILLEGAL_STATE} when Redis records another shard count for this cluster
         */
        public RedissonQuotaLedger build() {
            requireArgument(clientId != null, "clientId", "clientId is required");
            return new RedissonQuotaLedger(this).start();
        }
    }
}
