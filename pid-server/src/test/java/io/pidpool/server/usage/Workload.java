package io.pidpool.server.usage;

import io.pidpool.client.internal.quota.DeductRequest;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Several threads taking permits (deductions) on a set of PIDs, retrying every call with the same id
 * until Redis answers (some calls are deliberately sent twice), and refunding some permits
 * partially, also twice. Records every answered grant and refund: what the ledger must end up with.
 */
final class Workload {
    record Grant(String pid, long amount) {}

    record GivenBack(String deductionId, String pid, long amount) {}

    final Map<String, Grant> grants = new ConcurrentHashMap<>();
    final Map<String, GivenBack> refunds = new ConcurrentHashMap<>();
    final AtomicInteger unavailable = new AtomicInteger();
    private final List<String> pids;
    private final QuotaMonth month;
    private final String tag;

    Workload(List<String> pids, QuotaMonth month, String tag) {
        this.pids = List.copyOf(pids);
        this.month = month;
        this.tag = tag;
    }

    /** {@code clients.size()} threads, each doing {@code ops} permits; returns when all are done. */
    void run(List<RedissonQuotaLedger> clients, int ops, long seed, Runnable midway) {
        AtomicInteger done = new AtomicInteger();
        int total = clients.size() * ops;
        AtomicInteger midwayRun = new AtomicInteger();
        onThreads(clients, seed, "load", (client, random, thread) -> {
            for (int i = 0; i < ops; i++) {
                one(client, random, tag + "-" + thread + "-" + i);
                if (done.incrementAndGet() == total / 2 && midwayRun.getAndIncrement() == 0) {
                    midway.run();
                }
            }
        });
    }

    /** What one load thread does with its client and its own seeded random. */
    private interface PerClient {
        void run(RedissonQuotaLedger client, SplittableRandom random, int thread);
    }

    /** One thread per client (seed + index), started together; returns when all are done. */
    private static void onThreads(List<RedissonQuotaLedger> clients, long seed, String name, PerClient body) {
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < clients.size(); t++) {
            RedissonQuotaLedger client = clients.get(t);
            SplittableRandom random = new SplittableRandom(seed + t);
            int thread = t;
            Thread th = new Thread(() -> body.run(client, random, thread), name + "-" + t);
            th.start();
            threads.add(th);
        }
        joinAll(threads);
    }

    private static void joinAll(List<Thread> threads) {
        for (Thread t : threads) {
            try {
                t.join(Duration.ofMinutes(3).toMillis());
                if (t.isAlive()) {
                    throw new AssertionError("load thread did not finish");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /**
     * {@code clients.size()} threads, each sending {@code batches} batches of {@code size} deductions
     * through the batch script ({@code tryDeductAll}); 1 in 5 ids is repeated within its batch and 1
     * in 4 batches is sent twice (retries answered "granted before"); 1 in 3 grants is partially
     * refunded through the single refund script, twice.
     */
    void runBatched(List<RedissonQuotaLedger> clients, int batches, int size, long seed) {
        onThreads(clients, seed, "batch-load", (client, random, thread) -> {
            for (int b = 0; b < batches; b++) {
                batch(client, random, tag + "-" + thread + "-" + b + "-", size);
            }
        });
    }

    private void batch(RedissonQuotaLedger client, SplittableRandom random, String prefix, int size) {
        List<DeductRequest> requests = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            if (i > 0 && random.nextInt(5) == 0) {
                requests.add(requests.get(random.nextInt(i)));
            } else {
                String pid = pids.get(random.nextInt(pids.size()));
                requests.add(new DeductRequest(pid, month, 1 + random.nextInt(3), prefix + i, true));
            }
        }
        int sends = random.nextInt(4) == 0 ? 2 : 1;
        List<DeductResult> results = null;
        for (int s = 0; s < sends; s++) {
            results = untilAnswered(() -> client.tryDeductAll(requests));
        }
        for (int i = 0; i < size; i++) {
            DeductRequest r = requests.get(i);
            if (!results.get(i).granted()
                    || grants.putIfAbsent(r.deductionId(), new Grant(r.pid(), r.amount())) != null) {
                continue;
            }
            if (random.nextInt(3) == 0) {
                String rid = "r" + r.deductionId();
                long back = 1 + random.nextInt((int) r.amount());
                RefundResult rr = null;
                for (int s = 0; s < 2; s++) {
                    rr = untilAnswered(() -> client.refund(r.pid(), month, r.deductionId(), rid, back));
                }
                if (rr instanceof RefundResult.RefundApplied || rr instanceof RefundResult.RefundDuplicate) {
                    refunds.put(rid, new GivenBack(r.deductionId(), r.pid(), back));
                }
            }
        }
    }

    private void one(RedissonQuotaLedger client, SplittableRandom random, String id) {
        String pid = pids.get(random.nextInt(pids.size()));
        long amount = 1 + random.nextInt(3);
        int sends = random.nextInt(5) == 0 ? 2 : 1;
        DeductResult result = null;
        for (int s = 0; s < sends; s++) {
            result = untilAnswered(() -> client.tryDeduct(pid, month, amount, id));
        }
        if (!result.granted()) {
            return;
        }
        grants.put(id, new Grant(pid, amount));
        if (random.nextInt(3) == 0) {
            String rid = "r" + id;
            long back = 1 + random.nextInt((int) amount);
            RefundResult r = null;
            for (int s = 0; s < 2; s++) {
                r = untilAnswered(() -> client.refund(pid, month, id, rid, back));
            }
            if (r instanceof RefundResult.RefundApplied || r instanceof RefundResult.RefundDuplicate) {
                refunds.put(rid, new GivenBack(id, pid, back));
            }
        }
    }

    private <T> T untilAnswered(java.util.function.Supplier<T> call) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            try {
                return call.get();
            } catch (RuntimeException e) {
                unavailable.incrementAndGet();
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
        }
    }

    /** Granted minus refunded, per PID. */
    Map<String, Long> expectedNet() {
        Map<String, Long> net = new TreeMap<>();
        grants.values().forEach(g -> net.merge(g.pid(), g.amount(), Long::sum));
        refunds.values().forEach(r -> net.merge(r.pid(), -r.amount(), Long::sum));
        return net;
    }
}
