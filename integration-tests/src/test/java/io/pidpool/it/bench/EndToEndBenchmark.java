package io.pidpool.it.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.it.server.ServerProcess;
import io.pidpool.it.zk.ZooKeepers;
import io.pidpool.server.runtime.StandaloneServer;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import org.apache.curator.test.TestingCluster;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The hand-out as a user sees it, through public paths only: a standalone PidPool (embedded
 * ZooKeeper and Redis, H2, the HTTP API) and {@code instances} real {@link PidClient}s of one module
 * in this JVM. Per round, the clock starts when {@code POST /api/v1/batches} of {@code pids} new PIDs
 * is sent and stops when the last of them has returned from {@code onAssigned} on some client. The
 * round's PIDs are then deleted (through the API) and every client waits until it holds nothing.
 * The first round is reported apart (cold); the others are warm.
 *
 * <p>Baseline in the same run, after each round: {@code pids} asynchronous creates of nodes of a PID
 * node's size into the same ZooKeeper by a fresh session (the floor: the leader writes at least one
 * node per PID, and every client reads and acknowledges it). Also printed: the POST's own answer
 * time; the first and the median {@code onAssigned}; the CPU time this JVM spent from the POST to
 * the last {@code onAssigned}, per PID and by thread (names with numbers folded), which separates what
 * the server, the clients and the embedded ZooKeeper cost; and per client at start: {@code start()}
 * until registered, threads and heap. Before each round and before the floor the benchmark waits
 * until this JVM is nearly idle (under a quarter of a core over 200 ms), so that neither pays for what
 * the step before left running (row deletions, acknowledgements).
 *
 * <p>Arguments ({@code key=value}): {@code pids} (1000), {@code instances} (50), {@code rounds} (6,
 * the first cold), {@code sharedRedis} (1: the clients share one {@link RedissonClient}, as modules
 * of one business JVM would; 0: one each), {@code timeoutSec} (120), {@code production} (0; 1: the
 * production shape instead of the standalone: three {@code server --config} processes on a
 * three-server curator-test ensemble, a fresh schema on the PostgreSQL of {@code
 * PIDPOOL_TEST_POSTGRES_URL} and the Redis of {@code PIDPOOL_TEST_REDIS_URL}, batches posted to a
 * follower), {@code sweep} (0; 1: {@code rounds} rounds at each of 1,000, 2,000, 5,000 and 10,000
 * PIDs, and a PNG plot of the warm medians in docs/img), {@code naive} (1: also time one synchronous
 * create per PID, the naive baseline), {@code warmup} (0; N: after the cold round, N rounds at the
 * largest size that no summary counts, so that the JIT has compiled the paths before the warm rounds
 * are timed). Not a test: nothing asserts.
 * Command: docs/benchmarks.md.
 */
public final class EndToEndBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "bench-admin-token-0123456789abcdef";
    private static final String MODULE = "dept#bench#e2e";

    private EndToEndBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, Integer> o = new LinkedHashMap<>();
        o.put("pids", 1000);
        o.put("instances", 50);
        o.put("rounds", 6);
        o.put("sharedRedis", 1);
        o.put("timeoutSec", 120);
        o.put("production", 0);
        o.put("sweep", 0);
        o.put("naive", 1);
        o.put("warmup", 0);
        AllocationBenchmark.parseArgs(args, o);
        try {
            run(o);
        } finally {
            System.out.flush();
        }
        System.exit(0); // embedded servers' non-daemon threads
    }

    private static void run(Map<String, Integer> o) throws Exception {
        int pids = o.get("pids");
        int instances = o.get("instances");
        Duration timeout = Duration.ofSeconds(o.get("timeoutSec"));
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        Path data = Files.createTempDirectory("pidpool-e2e-bench");
        System.out.printf(
                Locale.ROOT,
                "end-to-end hand-out (%s): %,d PIDs to %d PidClients (one module), %d rounds, sharedRedis=%d,"
                        + " %d cores%n",
                o.get("production") == 1
                        ? "3 servers, 3-server ZooKeeper ensemble, PostgreSQL, Redis"
                        : "standalone: embedded ZooKeeper and Redis, H2",
                pids,
                instances,
                o.get("rounds"),
                o.get("sharedRedis"),
                Runtime.getRuntime().availableProcessors());
        try (Stack stack = o.get("production") == 1 ? Stack.production(data) : Stack.standalone(data)) {
            String base = stack.httpBase();
            String key = stack.secretKey();
            Api api = new Api(base);
            api.send(
                    "PUT",
                    "/api/v1/modules/" + MODULE.replace("#", "%23"),
                    "{\"servers\":" + instances + ",\"monthlyDemand\":0}");

            Hand hand = new Hand();
            RedissonClient shared = null;
            if (o.get("sharedRedis") == 1) {
                Config config = new Config();
                config.useSingleServer().setAddress(stack.redisAddress());
                shared = Redisson.create(config);
            }
            List<PidClient> clients = new ArrayList<>();
            List<Double> startMs = new ArrayList<>();
            long threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
            Map<String, Integer> namesBefore = threadNames();
            long heapBefore = usedHeapAfterGc();
            try {
                for (int i = 0; i < instances; i++) {
                    PidClient.Builder b = PidClient.builder()
                            .connectString(stack.zkConnect())
                            .cluster(stack.cluster())
                            .module(MODULE)
                            .instanceId("e2e-" + i)
                            .sessionTimeout(Duration.ofSeconds(10))
                            .startTimeout(Duration.ofSeconds(60))
                            .secretKey(key)
                            .listener(hand);
                    b = shared != null ? b.redisson(shared) : b.redisAddress(stack.redisAddress());
                    PidClient client = b.build();
                    long t0 = System.nanoTime();
                    client.start();
                    startMs.add((System.nanoTime() - t0) / 1e6);
                    clients.add(client);
                }
                double first = startMs.get(0);
                long threads = ManagementFactory.getThreadMXBean().getThreadCount() - threadsBefore;
                long heap = usedHeapAfterGc() - heapBefore;
                Collections.sort(startMs);
                System.out.printf(
                        Locale.ROOT,
                        "per client: start() until registered median %.1f ms, max %.1f ms (first %.1f ms);"
                                + " %.1f threads; %.2f MB heap%n",
                        startMs.get(startMs.size() / 2),
                        startMs.get(startMs.size() - 1),
                        first,
                        threads / (double) instances,
                        heap / (double) instances / 1e6);

                Map<String, Integer> namesAfter = threadNames();
                namesBefore.forEach((name, n) -> namesAfter.merge(name, -n, Integer::sum));
                namesAfter.values().removeIf(n -> n <= 0);
                System.out.println("threads the clients added, by name: " + namesAfter);
                List<Integer> sizes = o.get("sweep") == 1 ? SWEEP : List.of(pids);
                Map<Integer, List<Row>> bySize = new LinkedHashMap<>();
                int round = 0;
                int warmup = o.get("warmup");
                if (warmup > 0) {
                    // the cold round, then warm-up rounds at the largest size that no summary counts
                    Row cold = round(api, hand, stack, sizes.get(0), round++, timeout, o.get("naive") == 1);
                    summary(List.of(cold), sizes.get(0), instances, true);
                    int largest = Collections.max(sizes);
                    for (int w = 0; w < warmup; w++) {
                        round(api, hand, stack, largest, round++, timeout, false);
                    }
                    System.out.printf(Locale.ROOT, "(%d warm-up rounds of %,d PIDs: in no summary)%n", warmup, largest);
                }
                for (int size : sizes) {
                    List<Row> rows = new ArrayList<>();
                    for (int r = 0; r < o.get("rounds"); r++, round++) {
                        rows.add(round(api, hand, stack, size, round, timeout, o.get("naive") == 1));
                    }
                    summary(rows, size, instances, warmup == 0 && round == rows.size());
                    bySize.put(size, rows);
                }
                if (sizes.size() > 1) {
                    plot(bySize, instances, o.get("production") == 1);
                }
                if (hand.doubleHolds.get() > 0) {
                    System.out.println("WARNING: " + hand.doubleHolds.get() + " double holds seen by the listener");
                }
            } finally {
                for (PidClient c : clients) {
                    c.close();
                }
                if (shared != null) {
                    shared.shutdown();
                }
            }
        }
    }

    /** PID counts of {@code sweep=1}. */
    private static final List<Integer> SWEEP = List.of(1_000, 2_000, 5_000, 10_000);

    /** One round: add {@code size} PIDs, wait for every onAssigned, delete them, then the baselines. */
    private static Row round(Api api, Hand hand, Stack stack, int size, int round, Duration timeout, boolean naive)
            throws Exception {
        List<String> ids = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            ids.add("r" + round + "-" + i);
        }
        String body = add(ids); // the operator's request is ready before it is sent
        quiesce();
        hand.expect(size);
        Map<String, Long> vmCpu0 = VmThreadCpu.byKind();
        long cpu0 = processCpuNanos();
        long[] gc0 = gcCountAndMillis();
        Map<Long, Long> threadCpu0 = threadCpu();
        HandOutEvent event = new HandOutEvent(round, size);
        event.begin();
        long t0 = System.nanoTime();
        JsonNode batch = api.send("POST", "/api/v1/batches", body);
        long answered = System.nanoTime();
        if (!hand.await(timeout)) {
            throw new IllegalStateException("round " + round + ": only " + hand.assigned.get() + " of " + size
                    + " assigned after " + timeout + " (batch " + batch + ")");
        }
        event.commit();
        Map<Long, Long> threadCpu1 = threadCpu();
        Map<String, Long> vmCpu = VmThreadCpu.since(vmCpu0);
        long cpu = processCpuNanos() - cpu0;
        String byThread = cpuByThreadGroup(threadCpu0, threadCpu1, cpu, vmCpu);
        long[] gc = gcCountAndMillis();
        long handout = hand.lastAssignedAt.get() - t0;
        System.out.printf(
                Locale.ROOT,
                "round %d: onAssigned first %.1f ms, half %.1f ms; CPU of this JVM %.0f ms (%.0f us per PID);"
                        + " %d collections, %d ms%n",
                round,
                (hand.firstAssignedAt.get() - t0) / 1e6,
                (hand.halfAssignedAt.get() - t0) / 1e6,
                cpu / 1e6,
                cpu / 1e3 / size,
                gc[0] - gc0[0],
                gc[1] - gc0[1]);
        System.out.println("  CPU ms by thread group: " + byThread);
        api.send("POST", "/api/v1/batches?wait=true", delete(ids));
        hand.awaitNoneHeld(timeout);
        quiesce();
        long floor = creates(stack.zkConnect(), size, "/e2e-floor-" + round, false);
        long naiveNanos = naive ? creates(stack.zkConnect(), size, "/e2e-naive-" + round, true) : 0;
        System.out.printf(
                Locale.ROOT,
                "round %d (%,d PIDs, %s): POST -> last onAssigned %.1f ms (POST answered in %.1f ms);"
                        + " raw creates %.1f ms; ratio %.2f%s%n",
                round,
                size,
                round == 0 ? "cold" : "warm",
                handout / 1e6,
                (answered - t0) / 1e6,
                floor / 1e6,
                handout / (double) floor,
                naive
                        ? String.format(Locale.ROOT, "; naive (one synchronous create each) %.1f ms", naiveNanos / 1e6)
                        : "");
        return new Row(round, handout, answered - t0, floor, naiveNanos);
    }

    private record Row(int round, long handoutNanos, long postNanos, long floorNanos, long naiveNanos) {}

    /**
     * A round's hand-out in a flight recording, for profiling only what the round measures: run with
     * {@code -Dbench.jvmArgs="-XX:StartFlightRecording=filename=e2e.jfr,settings=profile"} and keep the
     * execution samples that fall inside these events.
     */
    @Name("io.pidpool.bench.HandOut")
    @Label("Hand-out round")
    private static final class HandOutEvent extends Event {
        @Label("Round")
        final int round;

        @Label("PIDs")
        final int pids;

        HandOutEvent(int round, int pids) {
            this.round = round;
            this.pids = pids;
        }
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Garbage collections so far and the time the collectors report for them. */
    private static long[] gcCountAndMillis() {
        long count = 0;
        long millis = 0;
        for (var gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            millis += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, millis};
    }

    private static Map<Long, Long> threadCpu() {
        var mx = ManagementFactory.getThreadMXBean();
        Map<Long, Long> cpu = new java.util.HashMap<>();
        for (long id : mx.getAllThreadIds()) {
            cpu.put(id, mx.getThreadCpuTime(id));
        }
        return cpu;
    }

    /**
     * CPU spent from {@code before} to {@code after}, by thread name with numbers folded, the largest
     * first; then what the process spent outside its Java threads (garbage collection, JIT compilers,
     * the VM itself), split by {@code vm} where the system tells; the rest is threads that ended, and
     * what the process ran between the readings of the counters. The names are looked up after the
     * times were taken, which is slow with thousands of threads.
     */
    private static String cpuByThreadGroup(
            Map<Long, Long> before, Map<Long, Long> after, long processCpu, Map<String, Long> vm) {
        var mx = ManagementFactory.getThreadMXBean();
        Map<String, Long> groups = new java.util.HashMap<>();
        long javaThreads = 0;
        for (var thread : after.entrySet()) {
            long id = thread.getKey();
            long now = thread.getValue();
            var info = mx.getThreadInfo(id);
            if (info == null || now < 0) {
                continue;
            }
            String name = info.getThreadName().replaceAll("\\d+", "#");
            long spent = now - before.getOrDefault(id, 0L);
            groups.merge(name, spent, Long::sum);
            javaThreads += spent;
        }
        long outside = processCpu - javaThreads;
        long known = vm.values().stream().mapToLong(Long::longValue).sum();
        String split = vm.isEmpty()
                ? "GC, JIT, VM, exited threads"
                : vm.entrySet().stream()
                                .map(e -> e.getKey() + " " + e.getValue() / 1_000_000)
                                .collect(java.util.stream.Collectors.joining(", "))
                        + ", other " + (outside - known) / 1_000_000;
        return "Java threads " + javaThreads / 1_000_000 + ", outside them (" + split + ") " + outside / 1_000_000
                + "; "
                + groups.entrySet().stream()
                        .filter(e -> e.getValue() >= 5_000_000)
                        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                        .limit(14)
                        .map(e -> e.getKey() + "=" + e.getValue() / 1_000_000)
                        .collect(java.util.stream.Collectors.joining(", "));
    }

    /**
     * Waits (at most 20 s) until this JVM uses less than a quarter of a core over 200 ms: the server
     * finishes what the previous step left (deleted rows, acknowledgements), so that neither the next
     * round nor the floor pays for it.
     */
    private static void quiesce() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < until) {
            long cpu = processCpuNanos();
            long t = System.nanoTime();
            Thread.sleep(200);
            if ((processCpuNanos() - cpu) < (System.nanoTime() - t) / 4) {
                return;
            }
        }
        System.out.println("(still busy after 20 s; going on)");
    }

    private static double median(List<Row> rows, java.util.function.ToLongFunction<Row> value) {
        List<Long> sorted = rows.stream().map(value::applyAsLong).sorted().toList();
        return sorted.get(sorted.size() / 2) / 1e6;
    }

    /** Warm medians against the PID count: PidPool, the naive baseline and the raw-create floor. */
    private static void plot(Map<Integer, List<Row>> bySize, int instances, boolean production) throws Exception {
        XYChart chart = new XYChartBuilder()
                .width(800)
                .height(500)
                .title("Hand-out: POST of a batch until the last onAssigned returned (" + instances + " PidClients, "
                        + (production ? "3 servers, ensemble, PostgreSQL" : "standalone") + ")")
                .xAxisTitle("PIDs in the batch")
                .yAxisTitle("ms (warm median)")
                .build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        List<Integer> x = new ArrayList<>(bySize.keySet());
        List<Double> pidpool = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        List<Double> naive = new ArrayList<>();
        for (List<Row> rows : bySize.values()) {
            List<Row> warm = rows.stream().filter(r -> r.round() > 0).toList();
            List<Row> use = warm.isEmpty() ? rows : warm;
            pidpool.add(median(use, Row::handoutNanos));
            floor.add(median(use, Row::floorNanos));
            naive.add(median(use, Row::naiveNanos));
        }
        chart.addSeries("PidPool end to end", x, pidpool);
        if (naive.stream().anyMatch(v -> v > 0)) {
            chart.addSeries("naive: one synchronous create per PID", x, naive);
        }
        chart.addSeries("floor: raw asynchronous creates", x, floor);
        Path out = Path.of("..", "docs", "img", production ? "handout-vs-pids-production" : "handout-vs-pids");
        Files.createDirectories(out.getParent());
        BitmapEncoder.saveBitmap(chart, out.toString(), BitmapEncoder.BitmapFormat.PNG);
        System.out.println("plot: " + out.toAbsolutePath().normalize() + ".png");
    }

    private static void summary(List<Row> rows, int pids, int instances, boolean firstOfRun) {
        Row cold = rows.get(0);
        List<Row> warm = firstOfRun ? rows.subList(1, rows.size()) : rows;
        if (firstOfRun) {
            System.out.printf(
                    Locale.ROOT,
                    "SUMMARY %,d/%d %s: %.1f ms (%.2fx raw creates)%n",
                    pids,
                    instances,
                    "cold (first round of the run)",
                    cold.handoutNanos() / 1e6,
                    cold.handoutNanos() / (double) cold.floorNanos());
        }
        if (!warm.isEmpty()) {
            List<Double> ms =
                    warm.stream().map(r -> r.handoutNanos() / 1e6).sorted().toList();
            List<Double> ratios = warm.stream()
                    .map(r -> r.handoutNanos() / (double) r.floorNanos())
                    .sorted()
                    .toList();
            System.out.printf(
                    Locale.ROOT,
                    "SUMMARY %,d/%d warm (%d rounds): median %.1f ms, min %.1f, max %.1f;"
                            + " ratio to raw creates median %.2fx%n",
                    pids,
                    instances,
                    warm.size(),
                    ms.get(ms.size() / 2),
                    ms.get(0),
                    ms.get(ms.size() - 1),
                    ratios.get(ratios.size() / 2));
        }
    }

    private static String add(List<String> ids) throws Exception {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode op = body.putArray("operations").addObject();
        op.put("type", "ADD").put("module", MODULE);
        ArrayNode pids = op.putArray("pids");
        for (String id : ids) {
            pids.addObject().put("id", id).put("secret", "pw-" + id).put("monthlyQuota", 10_000);
        }
        return JSON.writeValueAsString(body);
    }

    private static String delete(List<String> ids) throws Exception {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode op = body.putArray("operations").addObject();
        op.put("type", "DELETE");
        ArrayNode pids = op.putArray("pids");
        ids.forEach(pids::add);
        return JSON.writeValueAsString(body);
    }

    /**
     * {@code count} creates of ~PID-node-sized nodes under {@code root} by a fresh session, all at once
     * (asynchronous) or one after the other ({@code sync}); nanos.
     */
    private static long creates(String connect, int count, String root, boolean sync) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 10_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        try {
            connected.await(30, TimeUnit.SECONDS);
            zk.create(root, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            byte[] data = new byte[400]; // a PID node: state, sealed secret, quota, attributes
            CountDownLatch done = new CountDownLatch(count);
            AtomicInteger failed = new AtomicInteger();
            AsyncCallback.StringCallback cb = (rc, path, ctx, name) -> {
                if (rc != 0) {
                    failed.incrementAndGet();
                }
                done.countDown();
            };
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                if (sync) {
                    zk.create(root + "/n" + i, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                    done.countDown();
                } else {
                    zk.create(root + "/n" + i, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, cb, null);
                }
            }
            done.await(120, TimeUnit.SECONDS);
            long took = System.nanoTime() - t0;
            if (failed.get() > 0) {
                throw new IllegalStateException(failed.get() + " raw creates failed");
            }
            return took;
        } finally {
            zk.close();
        }
    }

    /** Live threads by name, numbers and hex ids folded ({@code pool-3-thread-7} -> {@code pool-#-thread-#}). */
    private static Map<String, Integer> threadNames() {
        Map<String, Integer> names = new java.util.TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName()
                    .replaceAll("\\b(?=[0-9a-f]*\\d)[0-9a-f]{6,}\\b", "#")
                    .replaceAll("\\d+", "#");
            names.merge(name, 1, Integer::sum);
        }
        return names;
    }

    private static long usedHeapAfterGc() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    /** Every client's listener: counts assignments of the current round, and what is held where. */
    private static final class Hand implements PidListener {
        final AtomicInteger assigned = new AtomicInteger();
        final AtomicInteger held = new AtomicInteger();
        final AtomicInteger doubleHolds = new AtomicInteger();
        final AtomicLong lastAssignedAt = new AtomicLong();
        final AtomicLong firstAssignedAt = new AtomicLong();
        final AtomicLong halfAssignedAt = new AtomicLong();
        final Map<String, Boolean> holding = new java.util.concurrent.ConcurrentHashMap<>();
        final AtomicReference<CountDownLatch> all = new AtomicReference<>(new CountDownLatch(0));
        volatile int expected;

        void expect(int count) {
            assigned.set(0);
            firstAssignedAt.set(0);
            halfAssignedAt.set(0);
            expected = count;
            all.set(new CountDownLatch(count));
        }

        boolean await(Duration timeout) throws InterruptedException {
            return all.get().await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        void awaitNoneHeld(Duration timeout) throws InterruptedException {
            long until = System.nanoTime() + timeout.toNanos();
            while (held.get() > 0) {
                if (System.nanoTime() > until) {
                    throw new IllegalStateException(held.get() + " PIDs still held after the delete");
                }
                Thread.sleep(5);
            }
        }

        @Override
        public void onAssigned(PidAccount account) {
            if (holding.putIfAbsent(account.id(), Boolean.TRUE) != null) {
                doubleHolds.incrementAndGet();
            }
            held.incrementAndGet();
            long now = System.nanoTime();
            lastAssignedAt.accumulateAndGet(now, Math::max);
            firstAssignedAt.compareAndSet(0, now);
            if (assigned.incrementAndGet() == expected / 2) {
                halfAssignedAt.set(now);
            }
            all.get().countDown();
        }

        @Override
        public void onRevoked(PidAccount account) {
            holding.remove(account.id());
            held.decrementAndGet();
        }
    }

    /** What the benchmark runs against. */
    private interface Stack extends AutoCloseable {
        String httpBase();

        String zkConnect();

        String cluster();

        String redisAddress();

        String secretKey() throws Exception;

        static Stack standalone(Path data) {
            StandaloneServer server = new StandaloneServer(new StandaloneServer.Options(0, 0, 0, data, TOKEN)).start();
            return new Stack() {
                public String httpBase() {
                    return "http://127.0.0.1:" + server.server().httpPort();
                }

                public String zkConnect() {
                    return server.zookeeper().connectString();
                }

                public String cluster() {
                    return server.server().config().cluster();
                }

                public String redisAddress() {
                    return server.redis().address();
                }

                public String secretKey() throws Exception {
                    return Files.readString(data.resolve("secret.key"), StandardCharsets.US_ASCII)
                            .trim();
                }

                public void close() {
                    server.close();
                }
            };
        }

        static Stack production(Path dir) throws Exception {
            String postgres =
                    envOr("PIDPOOL_TEST_POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/pidpool_test?user=postgres");
            String redis = envOr("PIDPOOL_TEST_REDIS_URL", "redis://127.0.0.1:6379");
            String cluster = "e2e" + ProcessHandle.current().pid();
            String schema = "pp_e2e_" + ProcessHandle.current().pid();
            try (Connection c = DriverManager.getConnection(postgres);
                    Statement st = c.createStatement()) {
                st.execute("CREATE SCHEMA " + schema);
            }
            String db = postgres + (postgres.contains("?") ? "&" : "?") + "currentSchema=" + schema;
            byte[] raw = new byte[32];
            new SecureRandom().nextBytes(raw);
            String key = Base64.getEncoder().encodeToString(raw);
            TestingCluster zk = ZooKeepers.ensemble(3);
            List<ServerProcess> servers = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    String yml = String.join(
                            "\n",
                            "cluster: " + cluster,
                            "http: { host: 127.0.0.1, port: 0 }",
                            "zookeeper: { connect: \"" + zk.getConnectString() + "\", sessionTimeoutMs: 5000 }",
                            "redis: { address: \"" + redis + "\" }",
                            "database: { url: \"" + db + "\", maxPoolSize: 8 }",
                            "security:",
                            "  secretKey: \"" + key + "\"",
                            "  tokens:",
                            "    - { name: bench, token: \"" + TOKEN + "\", role: admin }",
                            "worker: { enabled: false }",
                            "");
                    Path config = dir.resolve("server-" + i + ".yml");
                    Files.writeString(config, yml, StandardCharsets.UTF_8);
                    servers.add(ServerProcess.start("s" + i, config, TOKEN, dir));
                }
                for (ServerProcess s : servers) {
                    s.awaitReady(Duration.ofSeconds(120));
                }
            } catch (Exception | Error e) {
                servers.forEach(ServerProcess::close);
                zk.close();
                throw e;
            }
            // post to a follower: the operator's request travels the follower -> database -> leader path
            String leader = servers.get(0).get("/api/v1/cluster").path("leader").asText("");
            ServerProcess entry = servers.stream()
                    .filter(s -> !s.nodeId().equals(leader))
                    .findFirst()
                    .orElse(servers.get(0));
            System.out.println("posting to " + entry + " (leader " + leader + "); logs in " + dir);
            return new Stack() {
                public String httpBase() {
                    return entry.baseUrl();
                }

                public String zkConnect() {
                    return zk.getConnectString();
                }

                public String cluster() {
                    return cluster;
                }

                public String redisAddress() {
                    return redis;
                }

                public String secretKey() {
                    return key;
                }

                public void close() throws Exception {
                    servers.forEach(ServerProcess::close);
                    zk.close();
                    try (Connection c = DriverManager.getConnection(postgres);
                            Statement st = c.createStatement()) {
                        st.execute("DROP SCHEMA " + schema + " CASCADE");
                    }
                }
            };
        }

        private static String envOr(String name, String fallback) {
            String value = System.getenv(name);
            return value == null || value.isBlank() ? fallback : value;
        }
    }

    /** The operator's HTTP API with the admin token. */
    private static final class Api {
        private final String base;
        private final HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

        Api(String base) {
            this.base = base;
        }

        JsonNode send(String method, String path, String body) throws Exception {
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + path))
                    .header("Authorization", "Bearer " + TOKEN)
                    .header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(120))
                    .method(method, HttpRequest.BodyPublishers.ofString(body))
                    .build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() >= 300) {
                throw new IllegalStateException(
                        method + " " + path + " -> " + response.statusCode() + " " + response.body());
            }
            return response.body().isEmpty() ? JSON.nullNode() : JSON.readTree(response.body());
        }
    }
}
