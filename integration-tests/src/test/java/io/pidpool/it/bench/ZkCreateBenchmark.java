package io.pidpool.it.bench;

import io.pidpool.client.testing.TestSecrets;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.it.zk.ZooKeepers;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Baseline: how fast can one ZooKeeper client create PID-sized nodes on a local test server? The
 * leader's allocation benchmark is compared with these numbers (the leader writes one node per PID,
 * in multi-ops fenced by {@code check(/epoch)}).
 *
 * <p>Measures, after a warm-up round of each (JIT, server caches):
 *
 * <ul>
 *   <li><b>sync</b>: one synchronous {@code create} at a time (one round trip per node);
 *   <li><b>async</b>: asynchronous {@code create}s with at most {@code window} in flight;
 *   <li><b>multi</b>: asynchronous {@code multi} of {@code check(/epoch)} + {@code multiSize} creates,
 *       at most {@code multiWindow} multis in flight (the shape of a leader write);
 *   <li><b>fenced writer</b>: the leader's real write path, {@link FencedWriter} (units of one create
 *       each, packed into multi-ops of {@code writerOps} operations with the epoch check, at most
 *       {@code writerWindow} in flight, completions per unit).
 * </ul>
 *
 * <p>Arguments ({@code key=value}, all optional): {@code creates} (20000), {@code syncCreates} (2000),
 * {@code window} (1000), {@code multiSize} (100), {@code multiWindow} (8), {@code writerOps} (200), {@code writerWindow} (4), {@code rounds} (3). Run
 * it as docs/benchmarks-zk.md says; it prints a Markdown table. Not a test: nothing asserts.
 */
public final class ZkCreateBenchmark {
    private final ZooKeeper zk;
    private final byte[] data;
    private final AtomicInteger parents = new AtomicInteger();

    private ZkCreateBenchmark(ZooKeeper zk, byte[] data) {
        this.zk = zk;
        this.data = data;
    }

    public static void main(String[] args) throws Exception {
        Map<String, Integer> opts = new HashMap<>(Map.of(
                "creates", 20_000,
                "syncCreates", 2_000,
                "window", 1_000,
                "multiSize", 100,
                "multiWindow", 8,
                "writerOps", 200,
                "writerWindow", 4,
                "rounds", 3));
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            if (!opts.containsKey(kv[0])) {
                throw new IllegalArgumentException("unknown argument " + arg + "; known: " + opts.keySet());
            }
            opts.put(kv[0], Integer.parseInt(kv[1]));
        }
        byte[] data = PidNode.instruction(
                        "pid-000001",
                        PidState.ADDING,
                        new Epoch(7),
                        0x1000031c3360002L,
                        new PidNode.AccountPayload(10_000, 0, TestSecrets.seal("a-password-of-20-char"), Map.of()))
                .encode();

        try (TestingServer server = ZooKeepers.standalone()) {
            CountDownLatch connected = new CountDownLatch(1);
            ZooKeeper zk = new ZooKeeper(server.getConnectString(), 30_000, event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            if (!connected.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("cannot connect to " + server.getConnectString());
            }
            try {
                zk.create("/bench", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                zk.create("/epoch", "1".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                new ZkCreateBenchmark(zk, data).run(opts, server.getConnectString());
            } finally {
                zk.close();
            }
        }
    }

    private void run(Map<String, Integer> o, String connectString) throws Exception {
        int creates = o.get("creates");
        int syncCreates = o.get("syncCreates");
        int window = o.get("window");
        int multiSize = o.get("multiSize");
        int multiWindow = o.get("multiWindow");
        int rounds = o.get("rounds");
        System.out.printf(
                Locale.ROOT,
                "ZooKeeper create baseline: server %s (curator-test TestingServer, forceSync=%s), node data %d bytes,"
                        + " %d cores, java %s%n",
                connectString,
                System.getProperty("zookeeper.forceSync", "yes"),
                data.length,
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"));
        // warm-up: one of each, not reported
        sync(syncCreates / 4);
        async(creates / 4, window);
        multi(creates / 4, multiSize, multiWindow);
        int writerOps = o.get("writerOps");
        int writerWindow = o.get("writerWindow");
        fenced(creates / 4, writerOps, writerWindow);

        List<double[]> results = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            results.add(new double[] {
                sync(syncCreates),
                async(creates, window),
                multi(creates, multiSize, multiWindow),
                fenced(creates, writerOps, writerWindow)
            });
        }
        System.out.println();
        System.out.println("| mode | nodes per round | in flight | creates/s (median of " + rounds + ") | rounds |");
        System.out.println("|---|---|---|---|---|");
        String[] names = {
            "sync create",
            "async create",
            "async multi(check + " + multiSize + " creates)",
            "FencedWriter (multi-ops of " + writerOps + " ops incl. the check)"
        };
        String[] sizes = {
            Integer.toString(syncCreates),
            Integer.toString(creates),
            Integer.toString(creates),
            Integer.toString(creates)
        };
        String[] inFlight = {"1", window + " creates", multiWindow + " multis", writerWindow + " multis"};
        for (int m = 0; m < names.length; m++) {
            double[] rates = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                rates[r] = results.get(r)[m];
            }
            double[] sorted = rates.clone();
            Arrays.sort(sorted);
            StringBuilder all = new StringBuilder();
            for (double rate : rates) {
                all.append(all.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", rate));
            }
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %s | %s | %.0f | %s |%n",
                    names[m],
                    sizes[m],
                    inFlight[m],
                    sorted[rounds / 2],
                    all);
        }
    }

    private String parent() throws Exception {
        String parent = "/bench/p" + parents.incrementAndGet();
        zk.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        return parent;
    }

    /** Creates per second, one synchronous create at a time. */
    private double sync(int count) throws Exception {
        String parent = parent();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            zk.create(parent + "/n" + i, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        return rate(count, start);
    }

    /** Creates per second, asynchronous, at most {@code window} in flight. */
    private double async(int count, int window) throws Exception {
        String parent = parent();
        Semaphore permits = new Semaphore(window);
        CountDownLatch done = new CountDownLatch(count);
        AtomicInteger failed = new AtomicInteger();
        long start = System.nanoTime();
        for (int i = 0; i < count; i++) {
            permits.acquire();
            zk.create(
                    parent + "/n" + i,
                    data,
                    ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT,
                    (rc, path, ctx, name) -> {
                        if (rc != KeeperException.Code.OK.intValue()) {
                            failed.incrementAndGet();
                        }
                        permits.release();
                        done.countDown();
                    },
                    null);
        }
        done.await();
        double rate = rate(count, start);
        check(failed, "async create");
        return rate;
    }

    /** Creates per second in asynchronous multi-ops of check(/epoch) + {@code size} creates. */
    private double multi(int count, int size, int window) throws Exception {
        String parent = parent();
        int batches = (count + size - 1) / size;
        Semaphore permits = new Semaphore(window);
        CountDownLatch done = new CountDownLatch(batches);
        AtomicInteger failed = new AtomicInteger();
        long start = System.nanoTime();
        int created = 0;
        for (int b = 0; b < batches; b++) {
            List<Op> ops = new ArrayList<>(size + 1);
            ops.add(Op.check("/epoch", 0));
            for (int i = 0; i < size && created < count; i++, created++) {
                ops.add(Op.create(parent + "/n" + created, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
            }
            permits.acquire();
            zk.multi(
                    ops,
                    (rc, path, ctx, results) -> {
                        if (rc != KeeperException.Code.OK.intValue()) {
                            failed.incrementAndGet();
                        }
                        permits.release();
                        done.countDown();
                    },
                    null);
        }
        done.await();
        double rate = rate(count, start);
        check(failed, "multi");
        return rate;
    }

    /** Creates per second through the leader's {@link FencedWriter}, one unit (one create) per node. */
    private double fenced(int count, int opsPerMulti, int window) throws Exception {
        String parent = parent().substring("/bench".length()); // relative to the writer's namespace
        if (zk.exists("/bench/epoch", false) == null) {
            zk.create("/bench/epoch", "1".getBytes(), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        var token =
                new FenceToken(new Epoch(1), zk.exists("/bench/epoch", false).getVersion(), zk.getSessionId());
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<List<WriteResult>>> futures = new ArrayList<>(count);
        try (FencedWriter writer = new FencedWriter(
                () -> zk, "bench", "/epoch", token, opsPerMulti, window, e -> failed.incrementAndGet())) {
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                futures.add(writer.submit(List.of(ZkWrite.persistent(parent + "/n" + i, data))));
            }
            writer.flush();
            for (var future : futures) {
                try {
                    future.get(120, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    failed.incrementAndGet();
                }
            }
            double rate = rate(count, start);
            check(failed, "fenced writer");
            return rate;
        }
    }

    private static double rate(int count, long start) {
        return count / ((System.nanoTime() - start) / 1e9);
    }

    private static void check(AtomicInteger failed, String what) {
        if (failed.get() > 0) {
            throw new IllegalStateException(failed.get() + " " + what + " operations failed");
        }
    }
}
