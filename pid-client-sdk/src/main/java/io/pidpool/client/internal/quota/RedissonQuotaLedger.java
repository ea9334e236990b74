package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.internal.quota.QuotaScripts.Call;
import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.QuotaLedger;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.DeductResult.AlreadyGranted;
import io.pidpool.core.quota.DeductResult.Granted;
import io.pidpool.core.quota.DeductResult.Rejected;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.quota.RefundResult;
import io.pidpool.core.quota.RefundResult.RefundApplied;
import io.pidpool.core.quota.RefundResult.RefundDuplicate;
import io.pidpool.core.quota.RefundResult.RefundRejected;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
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
 * <p><b>Errors.</b> Bad input: {@code INVALID_ARGUMENT} naming the field, nothing sent to Redis.
 * Redis unreachable or timing out: {@code UNAVAILABLE}; the call may or may not have taken effect,
 * and repeating it with the same ids is safe (this is also what makes Redisson's own retries safe).
 *
 * <p><b>Concurrency.</b> Thread-safe and lock-free on the Java side; Redis serializes the scripts.
 * The Redisson client belongs to the caller and is not closed by {@link #close()}.
 */
public final class RedissonQuotaLedger implements QuotaLedger, AutoCloseable {
    /** set_limit.lua's answer to a limit write of an older leader epoch: {@code fenced|<recorded>}. */
    private static final String FENCED_REPLY = "fenced|";

    public static final Duration DEFAULT_RETENTION = Duration.ofDays(100);
    public static final Duration DEFAULT_OBSERVATION_MAX_AGE = Duration.ofSeconds(1);
    public static final Duration DEFAULT_META_TTL = Duration.ofSeconds(10);

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final String clientId;
    private final Clock clock;
    private final Duration retention;
    private final QuotaScripts scripts;
    private final QuotaNearCache nearCache;
    private final UsageEventLog events;

    private RedissonQuotaLedger(Builder b) {
        this.redisson = requireNonNull(b.redisson, "redisson");
        this.keys = new QuotaKeys(b.cluster, b.shards);
        this.clientId = Names.requireToken(b.clientId, "clientId");
        this.clock = b.clock;
        this.retention = b.retention;
        this.scripts = new QuotaScripts(redisson);
        this.nearCache =
                new QuotaNearCache(redisson, keys, b.ticker, b.maxObservationAge, b.metaTtl, b.reconnectionStrategy);
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
        List<Object> reply = scripts.run(
                Script.DEDUCT,
                k,
                r.pid(),
                r.month().key(),
                r.deductionId(),
                Long.toString(r.amount()),
                expireAt(r.month()),
                clientId,
                incarnation());
        return deductResult(r, reply, 0);
    }

    /**
     * {@link #tryDeduct(DeductRequest)} bounded in time: Redisson gives the call up after {@code
     * timeout} without a retry of its own, so nothing of it lingers in Redisson's queues after the
     * returned future failed. Completes on a Redisson thread (translate nothing there); fails with
     * {@code UNAVAILABLE} when Redis did not answer in time (the deduction may or may not have
     * happened; sending the same request again is safe).
     */
    public CompletableFuture<DeductResult> tryDeductAsync(DeductRequest r, Duration timeout) {
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
            expireAt(r.month()),
            clientId,
            incarnation()
        };
        return scripts.runBoundedAsync(new Call(Script.DEDUCT, k, args), timeout)
                .handle((reply, error) -> {
                    if (error != null) {
                        Throwable cause =
                                error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                                        ? error.getCause()
                                        : error;
                        throw cause instanceof RuntimeException re
                                ? QuotaScripts.translate("running script deduct.lua", re)
                                : QuotaScripts.unavailable("running script deduct.lua", cause);
                    }
                    return deductResult(r, reply, 0);
                });
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
            batch.replies.join();
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
        requireNonNull(requests, "requests");
        requireArgument(!requests.isEmpty(), "requests", "no deductions to send");
        Map<Integer, List<Integer>> byShard = new LinkedHashMap<>();
        for (int i = 0; i < requests.size(); i++) {
            DeductRequest r = requireNonNull(requests.get(i), "request");
            byShard.computeIfAbsent(keys.shardOf(r.pid()), sh -> new ArrayList<>())
                    .add(i);
        }
        List<List<Integer>> groups = new ArrayList<>(byShard.values());
        List<Call> calls = new ArrayList<>();
        String incarnation = incarnation();
        if (scripts.cluster()) {
            for (var e : byShard.entrySet()) {
                calls.add(batchCall(requests, List.of(e), incarnation));
            }
        } else {
            calls.add(batchCall(requests, byShard.entrySet(), incarnation));
        }
        return new DeductBatch(requests, groups, calls.size() == 1, scripts.runBatchAsync(calls, timeout));
    }

    /**
     * One run of the batch script for these shard groups (KEYS and ARGV as deduct_batch.lua says):
     * each month hash of a group ("usage": a PID in a month) is named once with its PID and month, and
     * each deduction refers to it by number, so Redis parses three short arguments per deduction.
     */
    private Call batchCall(
            List<DeductRequest> requests, Collection<Map.Entry<Integer, List<Integer>>> groups, String incarnation) {
        int n = 0;
        for (var g : groups) {
            n += g.getValue().size();
        }
        List<Object> k = new ArrayList<>(3 * groups.size() + 8);
        List<Object> args = new ArrayList<>(4 + 2 * groups.size() + 3 * n + 8);
        args.add(clientId);
        args.add(incarnation);
        args.add(null); // expireAt, set below
        args.add(Integer.toString(groups.size()));
        // one expiry for the whole call: the latest month's (a batch normally has one month)
        QuotaMonth latest = null;
        for (var g : groups) {
            int shard = g.getKey();
            k.add(keys.pids(shard));
            k.add(keys.events(shard));
            k.add(keys.sequences(shard));
            int counts = args.size();
            args.add(null); // usage count
            args.add(Integer.toString(g.getValue().size()));
            // usage number (1-based) of each PID and month in this group, in order of first use
            Map<String, Map<QuotaMonth, String>> usageNo = new java.util.HashMap<>();
            List<String> refs = new ArrayList<>(g.getValue().size());
            int usages = 0;
            for (int i : g.getValue()) {
                DeductRequest r = requests.get(i);
                Map<QuotaMonth, String> byMonth = usageNo.computeIfAbsent(r.pid(), p -> new java.util.HashMap<>(2));
                String no = byMonth.get(r.month());
                if (no == null) {
                    no = Integer.toString(++usages);
                    byMonth.put(r.month(), no);
                    k.add(keys.usage(r.pid(), r.month()));
                    k.add(keys.deductionIndex(shard, r.month()));
                    args.add(r.pid());
                    args.add(r.month().key());
                }
                refs.add(no);
                if (latest == null || r.month().compareTo(latest) > 0) {
                    latest = r.month();
                }
            }
            args.set(counts, Integer.toString(usages));
            int j = 0;
            for (int i : g.getValue()) {
                DeductRequest r = requests.get(i);
                args.add(refs.get(j++));
                args.add(r.deductionId());
                args.add(Long.toString(r.amount()));
            }
        }
        args.set(2, expireAt(latest));
        return new Call(Script.DEDUCT_BATCH, k, args.toArray());
    }

    /** Deductions sent by {@link #sendDeductAll}; decode once the replies are in. */
    public final class DeductBatch {
        private final List<DeductRequest> requests;
        private final List<List<Integer>> groups;
        private final boolean combined;
        private final CompletableFuture<List<Object>> replies;

        private DeductBatch(
                List<DeductRequest> requests,
                List<List<Integer>> groups,
                boolean combined,
                CompletableFuture<List<Object>> replies) {
            this.requests = requests;
            this.groups = groups;
            this.combined = combined;
            this.replies = replies;
        }

        public List<DeductRequest> requests() {
            return requests;
        }

        /** Completes on a Redisson thread when Redis answered (or failed: then {@link #decode()} throws). */
        public CompletableFuture<List<Object>> replies() {
            return replies;
        }

        /**
         * The answers in the order asked; feeds the near cache. Call after {@link #replies()} completed.
         *
         * @throws PidPoolException {@code UNAVAILABLE} when Redis did not answer (the deductions may or
         *     may not have happened; sending the same requests again is safe)
         */
        public List<DeductResult> decode() {
            List<Object> raw;
            try {
                raw = replies.getNow(null);
            } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                throw cause instanceof RuntimeException re
                        ? QuotaScripts.translate("running the batch deduct script", re)
                        : QuotaScripts.unavailable("running the batch deduct script", cause);
            }
            requireState(raw != null, "the batch has no replies yet");
            DeductResult[] out = new DeductResult[requests.size()];
            int at = 0;
            int c = 0;
            for (List<Integer> idx : groups) {
                @SuppressWarnings("unchecked")
                List<Object> reply = (List<Object>) raw.get(combined ? 0 : c++);
                if (!combined) {
                    at = 0;
                }
                for (int i : idx) {
                    out[i] = batchResult(requests.get(i), reply, at);
                    at += num(reply, at) == 1 ? 4 : 8; // a grant is 4 fields long (deduct_batch.lua)
                }
            }
            return List.of(out);
        }
    }

    /** One answer of the batch script: a grant is {@code {1, usedAfter, limit, epoch}}, the rest as deduct's. */
    private DeductResult batchResult(DeductRequest r, List<Object> reply, int at) {
        if (num(reply, at) != 1) {
            return deductResult(r, reply, at);
        }
        long used = lng(reply, at + 1);
        long limit = lng(reply, at + 2);
        nearCache.observe(r.pid(), r.month(), used, limit, lng(reply, at + 3));
        return new Granted(r.pid(), r.month(), r.deductionId(), r.amount(), used, limit);
    }

    private DeductResult deductResult(DeductRequest r, List<Object> reply, int at) {
        int code = num(reply, at);
        long used = lng(reply, at + 4);
        long limit = lng(reply, at + 5);
        long epoch = lng(reply, at + 6);
        nearCache.observe(r.pid(), r.month(), used, limit, epoch);
        return switch (code) {
            case 1 ->
                new Granted(r.pid(), r.month(), r.deductionId(), r.amount(), lng(reply, at + 2), lng(reply, at + 3));
            case 2 ->
                new AlreadyGranted(new Granted(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        lng(reply, at + 1),
                        lng(reply, at + 2),
                        lng(reply, at + 3)));
            case 3 ->
                new Rejected(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        r.amount(),
                        DeductResult.Reason.DEDUCTION_ID_CONFLICT,
                        used,
                        limit);
            case 4 ->
                new Rejected(
                        r.pid(),
                        r.month(),
                        r.deductionId(),
                        r.amount(),
                        DeductResult.Reason.QUOTA_EXHAUSTED,
                        used,
                        limit);
            default -> throw PidPoolException.illegalState("deduct script answered unknown code %d", code);
        };
    }

    // ---- refunds

    @Override
    public RefundResult refund(String pid, QuotaMonth month, String deductionId, String refundId, long amount) {
        Call call = refundCall(pid, month, deductionId, refundId, amount);
        List<Object> reply = scripts.run(call.script(), call.keys(), call.args());
        return refundResult(pid, month, deductionId, refundId, amount, reply);
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
                throw translated("running script refund.lua", error);
            }
            return refundResult(pid, month, deductionId, refundId, amount, reply);
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
                    expireAt(month),
                    clientId,
                    incarnation()
                });
    }

    private RefundResult refundResult(
            String pid, QuotaMonth month, String deductionId, String refundId, long amount, List<Object> reply) {
        int code = num(reply, 0);
        nearCache.observe(pid, month, lng(reply, 5), lng(reply, 6), lng(reply, 7));
        return switch (code) {
            case 1 ->
                new RefundApplied(
                        pid, month, deductionId, refundId, amount, lng(reply, 2), lng(reply, 3), lng(reply, 4));
            case 2 ->
                new RefundDuplicate(new RefundApplied(
                        pid, month, deductionId, refundId, lng(reply, 1), lng(reply, 2), lng(reply, 3), lng(reply, 4)));
            case 3 ->
                refundRejected(
                        pid, month, deductionId, refundId, amount, RefundResult.Reason.REFUND_ID_CONFLICT, reply);
            case 4 ->
                refundRejected(pid, month, deductionId, refundId, amount, RefundResult.Reason.UNKNOWN_DEDUCTION, reply);
            case 5 ->
                refundRejected(pid, month, deductionId, refundId, amount, RefundResult.Reason.EXCEEDS_DEDUCTION, reply);
            default -> throw PidPoolException.illegalState("refund script answered unknown code %d", code);
        };
    }

    /** A failure of a bounded call as the ledger raises it: {@code UNAVAILABLE} unless a script failed. */
    private static PidPoolException translated(String what, Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause()
                : error;
        return cause instanceof RuntimeException re
                ? QuotaScripts.translate(what, re)
                : QuotaScripts.unavailable(what, cause);
    }

    private static RefundRejected refundRejected(
            String pid,
            QuotaMonth month,
            String deductionId,
            String refundId,
            long amount,
            RefundResult.Reason reason,
            List<Object> reply) {
        return new RefundRejected(pid, month, deductionId, refundId, amount, reason, lng(reply, 2), lng(reply, 3));
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
                throw translated("running script index_lookup.lua", error);
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
        long used = lng(reply, 0);
        long limit = lng(reply, 1);
        nearCache.observe(pid, month, used, limit, lng(reply, 2));
        return new QuotaUsage(pid, month, used, limit);
    }

    /**
     * Sets the limit and bumps the PID's epoch in one script, then broadcasts the change to every
     * client's near cache through the map API (see {@link QuotaNearCache}).
     */
    @Override
    public void setLimit(String pid, long hardLimit) {
        Names.requirePidId(pid, "pid");
        MonthLedger.requireLimit(hardLimit);
        int shard = keys.shardOf(pid);
        String value = scripts.runValue(Script.SET_LIMIT, List.of(keys.pids(shard)), pid, Long.toString(hardLimit));
        broadcast(pid, value);
    }

    /**
     * {@link #setLimit(String, long)} by the leader of {@code leaderEpoch}: the script checks the shard's
     * leader epoch ({@link QuotaKeys#leaderEpoch}) and refuses an older one, or records a newer one, in
     * the same step as the write.
     *
     * @throws PidPoolException {@code FENCED} if a newer leader wrote a limit in the PID's shard or fenced
     *     it (nothing changes)
     */
    @Override
    public void setLimit(String pid, long hardLimit, Epoch leaderEpoch) {
        Names.requirePidId(pid, "pid");
        MonthLedger.requireLimit(hardLimit);
        requireNonNull(leaderEpoch, "epoch");
        int shard = keys.shardOf(pid);
        String value = scripts.runValue(
                Script.SET_LIMIT,
                List.of(keys.pids(shard), keys.leaderEpoch(shard)),
                pid,
                Long.toString(hardLimit),
                Long.toString(leaderEpoch.value()));
        requireNotFenced(value, leaderEpoch, shard);
        broadcast(pid, value);
    }

    /** Records {@code leaderEpoch} in every shard (one script run per shard); FENCED if one saw a newer one. */
    @Override
    public void fenceLimits(Epoch leaderEpoch) {
        requireNonNull(leaderEpoch, "epoch");
        for (int shard = 0; shard < keys.shards(); shard++) {
            String value = scripts.runValue(
                    Script.SET_LIMIT,
                    List.of(keys.pids(shard), keys.leaderEpoch(shard)),
                    "",
                    "0",
                    Long.toString(leaderEpoch.value()));
            requireNotFenced(value, leaderEpoch, shard);
        }
    }

    private static void requireNotFenced(String reply, Epoch mine, int shard) {
        if (reply != null && reply.startsWith(FENCED_REPLY)) {
            throw new PidPoolException(
                    ErrorCode.FENCED,
                    "epoch",
                    String.format(
                            "quota limit refused: shard %d has seen leader epoch %s, this write carries epoch %d",
                            shard, reply.substring(FENCED_REPLY.length()), mine.value()));
        }
    }

    /**
     * Sets the month's usage to 0 (its deduction and refund records stay, so ids still deduplicate),
     * bumps the PID's epoch and appends a reset event, in one script; then broadcasts the epoch change to every client's near cache.
     */
    @Override
    public void reset(String pid, QuotaMonth month) {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        int shard = keys.shardOf(pid);
        List<Object> reply = scripts.run(
                Script.RESET,
                List.of(keys.pids(shard), keys.usage(pid, month), keys.events(shard), keys.sequences(shard)),
                pid,
                month.key(),
                clientId,
                incarnation());
        broadcast(pid, (String) reply.get(0));
    }

    /**
     * {@link #reset} guarded by a generation (for the server's durable RESET_QUOTA): resets only if the
     * PID's recorded reset generation in Redis ({@link QuotaKeys#resetGenerations}, same hash tag as
     * its counters) is below {@code generation}, and records it in the same script. Idempotent: the
     * same generation again changes nothing and returns {@code false}.
     *
     * @param generation {@code >= 1}, increasing per PID
     * @return whether the reset happened now
     */
    public boolean resetOnce(String pid, QuotaMonth month, long generation) {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        if (generation < 1) {
            throw PidPoolException.invalid("generation", "generation must be >= 1, was %d", generation);
        }
        int shard = keys.shardOf(pid);
        List<Object> reply = scripts.run(
                Script.RESET,
                List.of(
                        keys.pids(shard),
                        keys.usage(pid, month),
                        keys.events(shard),
                        keys.sequences(shard),
                        keys.resetGenerations(shard)),
                pid,
                month.key(),
                clientId,
                incarnation(),
                Long.toString(generation));
        if (((Number) reply.get(1)).longValue() < 0) {
            return false;
        }
        broadcast(pid, (String) reply.get(0));
        return true;
    }

    /**
     * If this throws, the change itself is done but not broadcast: other clients trust their old
     * observations for at most maxObservationAge / metaTtl. Repeating the call broadcasts again.
     */
    private void broadcast(String pid, String value) {
        nearCache.publish(pid, value);
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

    /**
     * A fresh incarnation candidate for every script call. The script keeps the shard's existing
     * incarnation and uses the candidate only when the sequence hash is gone; a per-instance
     * candidate would let the same client re-create a lost hash under the incarnation it had before,
     * so restarted sequence numbers would look like the old ones (found by the usage sync's
     * FLUSHALL test). Random rather than {@code UUID.randomUUID()}: no SecureRandom per call.
     */
    private static String incarnation() {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        return new UUID(r.nextLong(), r.nextLong()).toString();
    }

    /** Unix seconds at which a month's keys expire: retention after the later of its end and now. */
    private String expireAt(QuotaMonth month) {
        // the month's end in UTC plus a day covers every zone a MonthlyWindow may use
        Instant end = month.next()
                .value()
                .atDay(1)
                .atStartOfDay()
                .toInstant(ZoneOffset.UTC)
                .plus(Duration.ofDays(1));
        Instant now = clock.instant();
        Instant base = end.isAfter(now) ? end : now;
        return Long.toString(base.plus(retention).getEpochSecond());
    }

    private static int num(List<Object> reply, int i) {
        return (int) lng(reply, i);
    }

    private static long lng(List<Object> reply, int i) {
        Object v = reply.get(i);
        if (v instanceof Long l) {
            return l;
        }
        if (v instanceof String s) {
            return Long.parseLong(s);
        }
        throw PidPoolException.illegalState("script answered %s at %d, expected a number", v, i);
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
