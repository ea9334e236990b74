package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaScripts.Call;
import io.pidpool.client.internal.quota.QuotaScripts.Script;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Many deductions as runs of {@code deduct_batch.lua}: grouped by shard, <em>one</em> run for all
 * groups on a single Redis (or master with replicas, Sentinel), one run per shard on Redis Cluster
 * (a script's keys must share a hash tag), pipelined in one Redisson {@link
 * org.redisson.api.RBatch}. Each deduction is decided exactly as by {@code deduct.lua}, in list order
 * within a shard. Thread-safe: it holds no state of its own.
 */
final class BatchDeductScript {
    private final QuotaKeys keys;
    private final QuotaScripts scripts;
    private final ScriptReplies answers;
    private final WriteStamps stamps;

    BatchDeductScript(QuotaKeys keys, QuotaScripts scripts, ScriptReplies answers, WriteStamps stamps) {
        this.keys = keys;
        this.scripts = scripts;
        this.answers = answers;
        this.stamps = stamps;
    }

    /**
     * Sends {@code requests} (answers in this order) and returns at once; Redisson gives the calls up
     * after {@code timeout} without a retry of its own ({@code null}: the client's configured timeout
     * and retries).
     */
    DeductBatch send(List<DeductRequest> requests, Duration timeout) {
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
        String incarnation = WriteStamps.incarnation();
        if (scripts.cluster()) {
            for (var e : byShard.entrySet()) {
                calls.add(call(requests, List.of(e), incarnation));
            }
        } else {
            calls.add(call(requests, byShard.entrySet(), incarnation));
        }
        return new DeductBatch(requests, groups, calls.size() == 1, scripts.runBatchAsync(calls, timeout), answers);
    }

    /**
     * One run of the batch script for these shard groups (KEYS and ARGV as deduct_batch.lua says):
     * each month hash of a group ("usage": a PID in a month) is named once with its PID and month, and
     * each deduction refers to it by number, so Redis parses three short arguments per deduction.
     */
    private Call call(
            List<DeductRequest> requests, Collection<Map.Entry<Integer, List<Integer>>> groups, String incarnation) {
        int n = 0;
        for (var g : groups) {
            n += g.getValue().size();
        }
        List<Object> k = new ArrayList<>(3 * groups.size() + 8);
        List<Object> args = new ArrayList<>(4 + 2 * groups.size() + 3 * n + 8);
        args.add(stamps.clientId());
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
            Map<String, Map<QuotaMonth, String>> usageNo = new HashMap<>();
            List<String> refs = new ArrayList<>(g.getValue().size());
            int usages = 0;
            for (int i : g.getValue()) {
                DeductRequest r = requests.get(i);
                Map<QuotaMonth, String> byMonth = usageNo.computeIfAbsent(r.pid(), p -> new HashMap<>(2));
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
        args.set(2, stamps.expireAt(latest));
        return new Call(Script.DEDUCT_BATCH, k, args.toArray());
    }
}
