package io.pidpool.server.usage;

import io.pidpool.client.quota.RedissonQuotaLedger;
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
        List<Thread> threads = new ArrayList<>();
        AtomicInteger done = new AtomicInteger();
        int total = clients.size() * ops;
        AtomicInteger midwayRun = new AtomicInteger();
        for (int t = 0; t < clients.size(); t++) {
            RedissonQuotaLedger client = clients.get(t);
            SplittableRandom random = new SplittableRandom(seed + t);
            int thread = t;
            Thread th = new Thread(
                    () -> {
                        for (int i = 0; i < ops; i++) {
                            one(client, random, tag + "-" + thread + "-" + i);
                            if (done.incrementAndGet() == total / 2 && midwayRun.getAndIncrement() == 0) {
                                midway.run();
                            }
                        }
                    },
                    "load-" + t);
            th.start();
            threads.add(th);
        }
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
