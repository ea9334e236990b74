package io.pidpool.worker.runtime;

import static org.awaitility.Awaitility.await;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.runtime.WorkerCluster.Execution;
import io.pidpool.worker.runtime.WorkerCluster.Member;
import io.pidpool.worker.task.TestDatabase;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Benchmark harness, not part of the normal build (the name matches neither *Test nor *IT). Run:
 *
 * <pre>
 * PIDPOOL_TEST_POSTGRES_URL=jdbc:postgresql://127.0.0.1:5432/pidpool_test?user=postgres \
 *   mvn -B -o verify -pl pid-worker -am -Dtest=WorkerBenchmark -Dit.test=none \
 *   -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false
 * </pre>
 *
 * Set {@code -Dbench.db=H2|POSTGRES|MARIADB} (default POSTGRES), {@code -Dbench.tasks=20000} (tasks
 * per throughput measurement with the no-op and 2 ms handlers), {@code -Dbench.ioTasks=8000} (with
 * the {@code bench.ioMillis} handler, default 20 ms), {@code -Dbench.runs=3} (rounds of 1, 2 and 4
 * workers; each round is its own same-run baseline) and {@code -Dbench.recoveries=5}. Prints one
 * line per measurement, prefixed {@code [bench]}, with the load average; results go to
 * docs/benchmarks-worker.md.
 */
@Tag("benchmark")
class WorkerBenchmark {
    static final TestDatabase.Kind DB =
            TestDatabase.Kind.valueOf(System.getProperty("bench.db", "POSTGRES").toUpperCase(Locale.ROOT));
    static final int TASKS = Integer.getInteger("bench.tasks", 20_000);
    static final int IO_TASKS = Integer.getInteger("bench.ioTasks", 8_000);
    static final int IO_MILLIS = Integer.getInteger("bench.ioMillis", 20);
    static final int RUNS = Integer.getInteger("bench.runs", 3);
    static final int RECOVERIES = Integer.getInteger("bench.recoveries", 5);

    static final WorkerConfig CONFIG = WorkerConfig.builder()
            .pollInterval(Duration.ofMillis(200))
            .lease(Duration.ofSeconds(6))
            .handlerTimeout(Duration.ofSeconds(3))
            .reapInterval(Duration.ofMillis(500))
            .build();

    private static void log(String format, Object... args) {
        System.out.printf(Locale.ROOT, "[bench] " + format + "%n", args);
    }

    @Test
    void all() throws Exception {
        log(
                "db=%s tasks=%d cores=%d load=%.1f config=%s",
                DB,
                TASKS,
                Runtime.getRuntime().availableProcessors(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                CONFIG);
        balance();
        try (ZooKeeperFixture zk = new ZooKeeperFixture()) {
            log(
                    "zookeeper %s (requested tickTime=%d ms); worker session requested %d ms",
                    zk.serverSettings(), ZooKeeperFixture.TICK_TIME_MS, ZooKeeperFixture.SESSION_TIMEOUT_MS);
            throughput(zk, 1, Duration.ZERO, TASKS / 4, "warm-up");
            List<Duration> handlers = List.of(Duration.ZERO, Duration.ofMillis(2), Duration.ofMillis(IO_MILLIS));
            for (int run = 1; run <= RUNS; run++) {
                for (Duration work : handlers) {
                    int tasks = work.toMillis() >= 10 ? IO_TASKS : TASKS;
                    double[] rates = new double[3];
                    int i = 0;
                    for (int workers : new int[] {1, 2, 4}) {
                        rates[i++] = throughput(zk, workers, work, tasks, "measure run=" + run);
                    }
                    log(
                            "ratio run=%d handler=%s 2vs1=%.2f 4vs1=%.2f load=%.1f",
                            run, handlerName(work), rates[1] / rates[0], rates[2] / rates[0], load());
                }
            }
            for (int i = 0; i < RECOVERIES; i++) {
                recovery(zk);
            }
        }
    }

    /** Max/min share of the slot space: 1 point per worker versus virtual nodes. */
    static void balance() {
        SplittableRandom random = new SplittableRandom(2025);
        for (int vnodes : new int[] {1, 16, 64, 128, 256, 512, 1024}) {
            StringBuilder line = new StringBuilder();
            for (int members : new int[] {4, 8, 16}) {
                int rings = 200;
                double[] ratios = new double[rings];
                for (int r = 0; r < rings; r++) {
                    List<String> ids = new ArrayList<>();
                    for (int m = 0; m < members; m++) {
                        ids.add(Long.toHexString(random.nextLong()));
                    }
                    ratios[r] = ConsistentHashRing.of(ids, vnodes).maxMinShareRatio();
                }
                Arrays.sort(ratios);
                line.append(String.format(
                        Locale.ROOT,
                        " | n=%d median %.2f p95 %.2f max %.2f",
                        members,
                        ratios[rings / 2],
                        ratios[rings * 95 / 100],
                        ratios[rings - 1]));
            }
            log("balance vnodes=%d%s", vnodes, line);
        }
    }

    static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    static String handlerName(Duration work) {
        return work.isZero() ? "no-op" : work.toMillis() + "ms-io";
    }

    /** Tasks/s from the first worker's start to the last DONE. */
    static double throughput(ZooKeeperFixture zk, int workers, Duration work, int tasks, String phase)
            throws Exception {
        try (WorkerCluster c = new WorkerCluster(zk, TestDatabase.open(DB, false, 4 * workers + 2), CONFIG)) {
            c.work = work;
            c.enqueue(tasks);
            long start = System.nanoTime();
            for (int i = 1; i <= workers; i++) {
                c.start("w" + i);
            }
            await().atMost(Duration.ofMinutes(10))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> done(c) >= tasks);
            double seconds = (System.nanoTime() - start) / 1e9;
            List<Long> perWorker =
                    c.members.values().stream().map(m -> m.metrics.done()).toList();
            long conflicts = c.members.values().stream()
                    .mapToLong(m -> m.metrics.claimConflicts())
                    .sum();
            log(
                    "%s workers=%d handler=%s tasks=%d seconds=%.2f tasks/s=%.0f per-worker=%s max/min-done=%.2f"
                            + " conflicts=%d duplicates=%d ring-max/min-share=%.3f load=%.1f",
                    phase,
                    workers,
                    handlerName(work),
                    tasks,
                    seconds,
                    tasks / seconds,
                    perWorker,
                    (double) perWorker.stream().mapToLong(Long::longValue).max().orElse(0)
                            / Math.max(
                                    1,
                                    perWorker.stream()
                                            .mapToLong(Long::longValue)
                                            .min()
                                            .orElse(1)),
                    conflicts,
                    c.duplicates(),
                    c.ring().maxMinShareRatio(),
                    load());
            return tasks / seconds;
        }
    }

    static long done(WorkerCluster c) {
        return c.members.values().stream().mapToLong(m -> m.metrics.done()).sum();
    }

    /** Time from a worker's death (crash as seen from outside) until its ranges are processed again. */
    static void recovery(ZooKeeperFixture zk) throws Exception {
        try (WorkerCluster c = new WorkerCluster(zk, TestDatabase.open(DB, false, 12), CONFIG)) {
            c.work = Duration.ofMillis(2);
            for (String name : List.of("w1", "w2", "w3", "w4")) {
                c.start(name);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> c.allLiveSee(4));
            c.enqueue(TASKS);
            await().atMost(Duration.ofMinutes(5)).until(() -> c.executions.size() >= TASKS / 5);
            Member victim = c.members.get("w2");
            List<SlotRange> dead = c.members.get("w1").pool.ring().rangesOf(victim.pool.memberId());
            int sessionMs = ZooKeeperFixture.negotiatedTimeoutMs(victim.client);
            if (sessionMs != ZooKeeperFixture.SESSION_TIMEOUT_MS) {
                throw new IllegalStateException("the server negotiated a session of " + sessionMs + " ms, not the "
                        + ZooKeeperFixture.SESSION_TIMEOUT_MS + " ms this benchmark states as T");
            }
            String node = "/pidpool/it/workers/" + WorkerCluster.GROUP + "/" + victim.pool.memberId();
            try (var probe = new NodeProbe(zk.client(zk.port()), node)) {
                long killed = System.nanoTime();
                long lastTouch = victim.zkProxy.lastForwardedNanos();
                victim.kill();
                probe.awaitGone();
                await().atMost(Duration.ofMinutes(1))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> c.allLiveSee(3));
                long ringSeen = System.nanoTime();
                await().atMost(Duration.ofMinutes(1)).until(() -> c.executions.stream()
                        .anyMatch(e -> e.nanos() > killed && !e.member().equals("w2") && inAny(dead, e.slot())));
                long first = c.executions.stream()
                        .filter(e -> e.nanos() > killed && !e.member().equals("w2") && inAny(dead, e.slot()))
                        .mapToLong(Execution::nanos)
                        .min()
                        .orElseThrow();
                await().atMost(Duration.ofMinutes(5)).until(() -> c.done() == TASKS);
                log(
                        "recovery T=%d ms (requested %d) poll=%d ms: node deleted by ZooKeeper %d-%d ms after the kill;"
                                + " the victim's last bytes to ZooKeeper %d ms before the kill, so deleted %d-%d ms"
                                + " after its session's last touch (ZooKeeper: T to T + one tick);"
                                + " all survivors see the ring without it %d ms after the kill; its ranges processed"
                                + " again %d ms after the kill (%d ms after the deletion); duplicates %d (batch %d)"
                                + " load=%.1f",
                        sessionMs,
                        ZooKeeperFixture.SESSION_TIMEOUT_MS,
                        CONFIG.pollInterval().toMillis(),
                        ms(probe.lastSeenSent - killed),
                        ms(probe.firstGone - killed),
                        ms(killed - lastTouch),
                        ms(probe.lastSeenSent - lastTouch),
                        ms(probe.firstGone - lastTouch),
                        ms(ringSeen - killed),
                        ms(first - killed),
                        ms(first - probe.lastSeenSent),
                        c.duplicates(),
                        CONFIG.batchSize(),
                        load());
            }
        }
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    /**
     * Brackets the deletion of a node: it still existed for a check sent at {@link #lastSeenSent},
     * and was gone for the one answered at {@link #firstGone}. Polls every 2 ms on its own session.
     */
    static final class NodeProbe implements AutoCloseable {
        final org.apache.curator.framework.CuratorFramework client;
        final String path;
        volatile long lastSeenSent;
        volatile long firstGone;

        NodeProbe(org.apache.curator.framework.CuratorFramework client, String path) throws Exception {
            this.client = client;
            this.path = path;
            if (client.checkExists().forPath(path) == null) {
                throw new IllegalStateException(path + " does not exist before the kill");
            }
        }

        void awaitGone() throws Exception {
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (System.nanoTime() < deadline) {
                long sent = System.nanoTime();
                if (client.checkExists().forPath(path) == null) {
                    firstGone = System.nanoTime();
                    return;
                }
                lastSeenSent = sent;
                Thread.sleep(2);
            }
            throw new IllegalStateException(path + " still exists a minute after the kill");
        }

        @Override
        public void close() {
            client.close();
        }
    }

    private static boolean inAny(List<SlotRange> ranges, long slot) {
        return ranges.stream().anyMatch(r -> r.contains(slot));
    }
}
