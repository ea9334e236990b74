package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Names;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.QuotaMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The ledger's writes that change what every client may believe about a PID: limits (fenced by the
 * leader's epoch) and resets. Each bumps the PID's epoch in its script and then broadcasts the new
 * epoch to every client's {@link QuotaNearCache}, so no client keeps refusing on an old observation.
 * Thread-safe: it holds no state of its own.
 */
final class BroadcastWrites {
    /** set_limit.lua's answer to a limit write of an older leader epoch: {@code fenced|<recorded>}. */
    private static final String FENCED_REPLY = "fenced|";
    /** Scripts (then broadcasts) per pipelined round trip of {@link #setLimits}. */
    static final int PIPELINE = 500;

    private final QuotaKeys keys;
    private final QuotaScripts scripts;
    private final QuotaNearCache nearCache;
    private final WriteStamps stamps;

    BroadcastWrites(QuotaKeys keys, QuotaScripts scripts, QuotaNearCache nearCache, WriteStamps stamps) {
        this.keys = keys;
        this.scripts = scripts;
        this.nearCache = nearCache;
        this.stamps = stamps;
    }

    /**
     * Sets the limit and bumps the PID's epoch in one script, then broadcasts the change to every
     * client's near cache through the map API (see {@link QuotaNearCache}).
     */
    void setLimit(String pid, long hardLimit) {
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
    void setLimit(String pid, long hardLimit, Epoch leaderEpoch) {
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

    /**
     * {@link #setLimit(String, long, Epoch)} for many PIDs, pipelined: the scripts go out in rounds of
     * {@value #PIPELINE} (one round trip each, every script atomic on its own), then their broadcasts
     * likewise. A leader provisions a batch of 10,000 new PIDs in a few dozen round trips rather than
     * 20,000 one after the other. A PID whose shard has seen a newer leader is refused, as alone; the
     * others of its round are written and broadcast, and then FENCED is thrown.
     */
    void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch) {
        requireNonNull(leaderEpoch, "epoch");
        hardLimits.forEach((pid, limit) -> {
            Names.requirePidId(pid, "pid");
            MonthLedger.requireLimit(limit);
        });
        List<Map.Entry<String, Long>> all = List.copyOf(hardLimits.entrySet());
        for (int from = 0; from < all.size(); from += PIPELINE) {
            List<Map.Entry<String, Long>> round = all.subList(from, Math.min(all.size(), from + PIPELINE));
            List<QuotaScripts.Call> calls = new ArrayList<>(round.size());
            for (Map.Entry<String, Long> e : round) {
                int shard = keys.shardOf(e.getKey());
                calls.add(new QuotaScripts.Call(
                        Script.SET_LIMIT,
                        List.of(keys.pids(shard), keys.leaderEpoch(shard)),
                        new Object[] {e.getKey(), Long.toString(e.getValue()), Long.toString(leaderEpoch.value())}));
            }
            List<Object> values = scripts.runValueBatch(calls);
            List<CompletableFuture<Boolean>> broadcasts = new ArrayList<>(round.size());
            PidPoolException fenced = null;
            for (int i = 0; i < round.size(); i++) {
                String pid = round.get(i).getKey();
                String value = (String) values.get(i);
                try {
                    requireNotFenced(value, leaderEpoch, keys.shardOf(pid));
                    if (!firstEntry(value)) {
                        broadcasts.add(nearCache.publishAsync(pid, value));
                    }
                } catch (PidPoolException e) {
                    fenced = fenced == null ? e : fenced;
                }
            }
            try {
                CompletableFuture.allOf(broadcasts.toArray(CompletableFuture[]::new))
                        .join();
            } catch (CompletionException e) {
                throw QuotaScripts.translate(
                        "broadcasting " + round.size() + " limit changes to near caches",
                        e.getCause() instanceof RuntimeException r ? r : e);
            }
            if (fenced != null) {
                throw fenced;
            }
        }
    }

    /** Records {@code leaderEpoch} in every shard (one script run per shard); FENCED if one saw a newer one. */
    void fenceLimits(Epoch leaderEpoch) {
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
    void reset(String pid, QuotaMonth month) {
        Names.requirePidId(pid, "pid");
        requireNonNull(month, "month");
        int shard = keys.shardOf(pid);
        List<Object> reply = scripts.run(
                Script.RESET,
                List.of(keys.pids(shard), keys.usage(pid, month), keys.events(shard), keys.sequences(shard)),
                pid,
                month.key(),
                stamps.clientId(),
                WriteStamps.incarnation());
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
    boolean resetOnce(String pid, QuotaMonth month, long generation) {
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
                stamps.clientId(),
                WriteStamps.incarnation(),
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
        if (!firstEntry(value)) {
            nearCache.publish(pid, value);
        }
    }

    /**
     * Whether a script's answer ({@code limit|epoch}) is the PID's first entry (epoch 1): then no local
     * cache can hold an older one (entries are never removed from the hash, a miss is not cached, and
     * a cache that lost its connection is emptied on resubscription), so the broadcast is skipped.
     * That is every PID of an ADD batch whose id is new: 10,000 invalidations fewer for 10,000 PIDs.
     */
    static boolean firstEntry(String value) {
        return value != null && value.endsWith("|1") && value.indexOf('|') == value.length() - 2;
    }
}
