package io.pidpool.it.bench;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.it.zk.ZooKeepers;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.zk.FencedWriter;
import java.lang.management.ManagementFactory;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * Allocation with the real leader ({@link ClusterMember} on a loopback curator-test ZooKeeper and H2
 * through the real Jdbi adapters) and lightweight simulated SDK instances ({@link SimInstance}: one
 * raw ZooKeeper session each, asynchronous reads and acknowledgements on the client's event thread).
 *
 * <p>Per case ({@code pids}/{@code instances}, one module): the time from the last instance
 * registering to every PID ADDED; the leader's ZooKeeper writes (multi-ops and operations, from its
 * {@link FencedWriter}) and all write transactions on the server (zxid delta, including the
 * instances' registrations and acknowledgements); heap after GC. Optionally a scale-out (moved PIDs
 * against the theoretical minimum) and a failover (the leader's session terminated on the server: time
 * until the successor leads and until it hands out a new PID; PIDs moved). In the same JVM, on the
 * same server: the naive baseline (one synchronous create per PID node) and the raw rate of
 * asynchronous creates. A warm-up case (1,000/50, not reported) runs first.
 *
 * <p>Arguments ({@code key=value}): {@code pids} (1000), {@code instances} (50), {@code scaleOut}
 * (5, 0 = skip), {@code failover} (1, 0 = skip), {@code warmup} (1), {@code naiveCap} (3000: the naive
 * baseline creates at most this many nodes and extrapolates), {@code timeoutSec} (120),
 * {@code rebalanceDelayMs} (-1 = the leader's default; 0 spreads vacant slots' shares at once, so
 * early instances take PIDs that are moved again as the others register), {@code instancesFirst} (0;
 * 1 = every instance registers before the leader starts, and the time is measured from the leader's
 * start, which then comes after the last registration: the hand-out without churn from staggered
 * registrations), {@code leaderSessionMs} (2000: the pid-server nodes' ZooKeeper session timeout;
 * at 100,000/1,000 on a loaded 2-core machine a 2 s session can expire under CPU starvation),
 * {@code rounds} (1: the measured case this many times, each followed by its own raw async creates;
 * the first round is cold, the others warm). Not a test: nothing asserts; it prints what it measured.
 * Command: docs/benchmarks.md.
 */
public final class AllocationBenchmark {
    static final ZkLayout LAYOUT = new ZkLayout("bench");
    static final String ROOT = "/" + LAYOUT.namespace();
    static final ModuleKey MODULE = ModuleKey.parse("dept#bench#sys");
    static final Duration LEADER_SESSION = Duration.ofSeconds(2);
    /** Marks the CPU groups of the JVM's own threads ({@link VmThreadCpu}), which are not Java threads. */
    private static final String VM_PREFIX = "VM's ";

    private final Map<String, Integer> opts;
    private final TestingServer server;
    private final ZooKeeper admin;
    private final List<String> report = new ArrayList<>();

    private AllocationBenchmark(Map<String, Integer> opts, TestingServer server, ZooKeeper admin) {
        this.opts = opts;
        this.server = server;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1); // the sessions' non-daemon threads would keep a failed run (and the bench lock) alive
        }
        System.exit(0); // daemon-less ZooKeeper client threads of terminated sessions
    }

    private static void run(String[] args) throws Exception {
        Map<String, Integer> opts = new HashMap<>(Map.of(
                "pids", 1_000,
                "instances", 50,
                "scaleOut", 5,
                "failover", 1,
                "warmup", 1,
                "naiveCap", 3_000,
                "timeoutSec", 120,
                "rebalanceDelayMs", -1,
                "instancesFirst", 0,
                "leaderSessionMs", (int) LEADER_SESSION.toMillis()));
        opts.put("rounds", 1); // the measured case this many times in one JVM: the first cold, the others warm
        opts.put("timeline", 0); // 1 = print each instance's timeline (docs/history/benchmarks-2026-11.md §4)
        opts.put("heap", 1); // 0: no heap measurements (three full GCs each)
        // the warm-up case's size: the default warms only the 1,000/50 paths, so a 100,000 run still
        // pays C2 compilations of the big case's paths inside its measured phase (docs/history/benchmarks-2026-11.md
        // §10)
        opts.put("warmupPids", 1_000);
        opts.put("warmupInstances", 50);
        parseArgs(args, opts);
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        try (TestingServer server = startServer()) {
            ZooKeeper admin = connect(server.getConnectString(), 30_000, null);
            var bench = new AllocationBenchmark(opts, server, admin);
            if (opts.get("warmup") > 0) {
                int warmupPids = opts.get("warmupPids");
                int warmupInstances = opts.get("warmupInstances");
                System.out.printf(
                        Locale.ROOT, "warm-up: %d PIDs / %d instances (not reported)%n", warmupPids, warmupInstances);
                bench.runCase("warmup", warmupPids, warmupInstances, 5, false, false);
                bench.report.clear();
                bench.asyncCreates("/warmup-async", 5_000);
                bench.syncCreates("/warmup-sync", 500);
            }
            int pids = opts.get("pids");
            int instances = opts.get("instances");
            int rounds = opts.get("rounds");
            List<Double> allocations = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                String name = rounds == 1 ? "run" : "run" + round;
                if (rounds > 1) {
                    bench.line("round %d of %d%s", round, rounds, round == 1 ? " (cold)" : " (warm)");
                }
                double allocationMs =
                        bench.runCase(name, pids, instances, opts.get("scaleOut"), opts.get("failover") > 0, true);
                // the floor on the same server, right after the case (its nodes are gone with its sessions)
                double asyncMs = bench.asyncCreates("/raw-async", pids);
                bench.line(
                        "raw async creates (1000 in flight): %d nodes in %.0f ms (%.0f/s); allocation / raw async "
                                + "creates = %.2f",
                        pids, asyncMs, pids / asyncMs * 1000, allocationMs / asyncMs);
                allocations.add(allocationMs);
                ratios.add(allocationMs / asyncMs);
            }
            if (rounds > 1) {
                List<Double> warmAllocations = allocations.subList(1, rounds);
                List<Double> warmRatios = ratios.subList(1, rounds);
                bench.line(
                        "rounds: cold %.0f ms (ratio %.2f); warm median %.0f ms (%.0f-%.0f), ratio median %.2f "
                                + "(%.2f-%.2f)",
                        allocations.get(0),
                        ratios.get(0),
                        median(warmAllocations),
                        Collections.min(warmAllocations),
                        Collections.max(warmAllocations),
                        median(warmRatios),
                        Collections.min(warmRatios),
                        Collections.max(warmRatios));
            }
            int naive = Math.min(pids, opts.get("naiveCap"));
            double syncPerSec = bench.syncCreates("/naive", naive);
            double naiveMs = pids / syncPerSec * 1000;
            double lastMs = allocations.get(rounds - 1);
            bench.line(
                    "naive baseline: %d synchronous creates at %.0f/s -> %s PIDs would take %.0f ms%s",
                    naive, syncPerSec, pids, naiveMs, naive < pids ? " (extrapolated)" : "");
            bench.line("naive / allocation%s = %.1f", rounds > 1 ? " (last round)" : "", naiveMs / lastMs);
            admin.close();
            System.out.println();
            System.out.println("==== results ====");
            bench.report.forEach(System.out::println);
        }
    }

    // ------------------------------------------------------------------ the case

    double runCase(String name, int pids, int instances, int scaleOut, boolean failover, boolean print)
            throws Exception {
        String url = "jdbc:h2:mem:bench" + name + System.nanoTime() + ";DB_CLOSE_DELAY=-1";
        try {
            return runCase(url, name, pids, instances, scaleOut, failover, print);
        } finally {
            // DB_CLOSE_DELAY=-1 keeps an in-memory database after its pool closes: later rounds and heap
            // figures must not carry this one
            try (var connection = java.sql.DriverManager.getConnection(url, "sa", "");
                    var statement = connection.createStatement()) {
                statement.execute("SHUTDOWN");
            }
        }
    }

    private double runCase(
            String url, String name, int pids, int instances, int scaleOut, boolean failover, boolean print)
            throws Exception {
        try (Database database = Database.open(url, "sa", "")) {
            Repositories repositories = database.repositories(Clock.systemUTC());
            repositories.modules().put(ModuleConfig.of(MODULE, Math.min(instances, ModuleConfig.MAX_SERVERS)));
            List<PidRecord> accounts = new ArrayList<>();
            for (int i = 0; i < pids; i++) {
                accounts.add(account("p" + name + "-" + i));
                if (accounts.size() == 5_000 || i == pids - 1) {
                    repositories.pids().insertAll(accounts);
                    accounts.clear();
                }
            }
            ensurePath(ROOT + LAYOUT.module(MODULE));
            long heapBefore = heapAfterGc();

            var tracker = new Tracker();
            boolean instancesFirst = opts.get("instancesFirst") > 0 && !name.equals("warmup");
            ClusterMember leader = instancesFirst ? null : startNode("leader-" + name, repositories);
            if (leader != null) {
                awaitTrue("leadership", 30, leader::isLeader);
            }
            long zxid0 = zxid();
            long[] p0 = packets();
            Map<String, Long> cpu0 = cpuByGroup();
            long[] w0 = leader == null ? new long[] {0, 0} : writerCounts(leader);

            ExecutorService starters = Executors.newFixedThreadPool(8);
            List<SimInstance> sims = new ArrayList<>();
            List<Future<SimInstance>> started = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                String id = "sim" + name + "-" + i;
                started.add(starters.submit(() -> new SimInstance(id, tracker).start(server.getConnectString())));
            }
            long lastRegistered = 0;
            for (Future<SimInstance> f : started) {
                SimInstance sim = f.get(120, TimeUnit.SECONDS);
                sims.add(sim);
                lastRegistered = Math.max(lastRegistered, sim.registeredNanos);
            }
            double registrationsMs = (lastRegistered - tracker.firstRegisteredNanos.get()) / 1e6;
            if (leader == null) {
                lastRegistered = System.nanoTime(); // the clock starts with the leader
                leader = startNode("leader-" + name, repositories);
            }
            boolean all = awaitQuietly(opts.get("timeoutSec"), () -> tracker.holders.size() == pids);
            long lastAdded = tracker.lastAddedNanos.get();
            double allocMs = (lastAdded - lastRegistered) / 1e6;
            Map<String, Long> cpu1 = cpuByGroup();
            long[] w1 = writerCounts(leader);
            long[] p1 = packets();
            long zxid1 = zxid();
            long heapAll = heapAfterGc();
            int[] spread = spread(sims);
            line(
                    "case %d PIDs / %d instances%s: %s; all ADDED %.0f ms after the last registration "
                            + "(registrations took %.0f ms in all); held per instance min %d max %d; duplicates %d",
                    pids,
                    instances,
                    instancesFirst ? " (instances first; clock starts with the leader)" : "",
                    all ? "all ADDED" : "ONLY " + tracker.holders.size() + " ADDED before the timeout",
                    allocMs,
                    registrationsMs,
                    spread[0],
                    spread[1],
                    tracker.duplicates.get());
            line(
                    "  leader writes: %d multi-ops carrying %d operations (%.1f ops per multi); server write "
                            + "transactions in the phase (zxid delta, incl. registrations and acks): %d",
                    w1[0] - w0[0], w1[1] - w0[1], (w1[1] - w0[1]) / (double) Math.max(1, w1[0] - w0[0]), zxid1 - zxid0);
            long received = p1[0] - p0[0];
            long sent = p1[1] - p0[1];
            line(
                    "  ZooKeeper server packets in the phase (JMX ServerStats, all sessions incl. registrations and "
                            + "pings): received %d = %.2f per PID; sent %d = %.2f per PID (replies + watch "
                            + "notifications); write transactions %.2f per PID",
                    received, received / (double) pids, sent, sent / (double) pids, (zxid1 - zxid0) / (double) pids);

            line("  %s", cpuLine(cpu0, cpu1, pids));

            if (print && opts.get("timeline") > 0) {
                timeline(sims);
            }
            if (scaleOut > 0 && all) {
                scaleOut(name, pids, scaleOut, sims, tracker, leader);
            }
            ClusterMember follower = null;
            if (failover && all) {
                follower = failover(name, pids, sims, tracker, leader, repositories);
            }
            for (SimInstance sim : sims) {
                sim.close();
            }
            starters.shutdownNow();
            long heapLeaderOnly = heapAfterGc();
            line(
                    "  heap after GC (whole JVM: ZooKeeper server, H2, leader%s): before the leader %d MB; "
                            + "with every instance connected %d MB; instances closed %d MB -> leader + ZooKeeper's "
                            + "tree <= %d MB",
                    follower == null ? "" : ", follower",
                    heapBefore >> 20,
                    heapAll >> 20,
                    heapLeaderOnly >> 20,
                    (heapLeaderOnly - heapBefore) >> 20);
            if (follower != null) {
                follower.close();
            }
            leader.close();
            deleteTree(ROOT);
            return allocMs;
        }
    }

    /**
     * Per instance (wall-clock ms, to line up with the leader's debug log): registered, saw its pids
     * path, first and last ADDING acknowledged; the last registrant and the slowest instances.
     */
    private void timeline(List<SimInstance> sims) {
        List<SimInstance> byRegistration = new ArrayList<>(sims);
        byRegistration.sort(java.util.Comparator.comparingLong(s -> s.registeredNanos));
        java.time.format.DateTimeFormatter f =
                java.time.format.DateTimeFormatter.ofPattern("HH:mm:ss.SSS").withZone(java.time.ZoneId.systemDefault());
        for (SimInstance sim : byRegistration) {
            line(
                    "  timeline %s: registered %s, pids path +%d ms, first ack +%d ms, last ack +%d ms",
                    sim.id,
                    f.format(java.time.Instant.ofEpochMilli(sim.registeredMillis)),
                    sim.pidsSeenMillis - sim.registeredMillis,
                    sim.firstAckMillis - sim.registeredMillis,
                    sim.lastAckMillis - sim.registeredMillis);
        }
    }

    private void scaleOut(
            String name, int pids, int extra, List<SimInstance> sims, Tracker tracker, ClusterMember leader)
            throws Exception {
        List<Integer> counts = new ArrayList<>();
        sims.forEach(s -> counts.add(s.held.size()));
        for (int i = 0; i < extra; i++) {
            counts.add(0);
        }
        long minimum = minimumMoves(counts, pids);
        long deletes0 = tracker.deletingAcks.get();
        long adds0 = tracker.addingAcks.get();
        long[] w0 = writerCounts(leader);
        long t0 = System.nanoTime();
        for (int i = 0; i < extra; i++) {
            sims.add(new SimInstance("sim" + name + "-x" + i, tracker).start(server.getConnectString()));
        }
        boolean settled = awaitQuietly(60, () -> {
            int[] s = spread(sims);
            return s[1] - s[0] <= 1 && tracker.holders.size() == pids && s[2] == pids;
        });
        double ms = (System.nanoTime() - t0) / 1e6;
        long[] w1 = writerCounts(leader);
        line(
                "  scale-out +%d instances: %s in %.0f ms; moved %d PIDs (DELETING acknowledged), %d ADDING "
                        + "acknowledged; theoretical minimum %d -> %s; leader writes %d multi-ops / %d ops",
                extra,
                settled ? "balanced" : "NOT balanced",
                ms,
                tracker.deletingAcks.get() - deletes0,
                tracker.addingAcks.get() - adds0,
                minimum,
                tracker.deletingAcks.get() - deletes0 == minimum ? "minimal" : "NOT minimal",
                w1[0] - w0[0],
                w1[1] - w0[1]);
    }

    private ClusterMember failover(
            String name, int pids, List<SimInstance> sims, Tracker tracker, ClusterMember leader, Repositories repos)
            throws Exception {
        ClusterMember follower = startNode("follower-" + name, repos);
        awaitTrue(
                "follower view", 60, () -> follower.pids(MODULE, PidState.ADDED).size() == pids);
        long deletes0 = tracker.deletingAcks.get();
        long adds0 = tracker.addingAcks.get();
        long session = leader.curator().getZookeeperClient().getZooKeeper().getSessionId();
        int negotiated = leader.curator().getZookeeperClient().getZooKeeper().getSessionTimeout();
        String probe = "p" + name + "-failover-probe";
        repos.pids().insertAll(List.of(account(probe)));
        long t0 = System.nanoTime();
        if (!ZooKeepers.terminateSession(session)) {
            line("  failover: could not terminate the leader's session");
            return follower;
        }
        awaitTrue("new leader", 60, follower::isLeader);
        double electedMs = (System.nanoTime() - t0) / 1e6;
        boolean served = awaitQuietly(60, () -> tracker.holders.containsKey(probe));
        double servingMs = (System.nanoTime() - t0) / 1e6;
        // give stray instructions a moment to show up before counting
        long quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        awaitQuietly(3, () -> System.nanoTime() > quietUntil);
        long moved = tracker.deletingAcks.get() - deletes0;
        long added = tracker.addingAcks.get() - adds0;
        line(
                "  failover (leader session terminated on the server; negotiated T = %d ms): successor leads after "
                        + "%.0f ms, hands out a new PID after %.0f ms (%s); PIDs moved %d, ADDING acknowledged %d "
                        + "(1 = the new PID); a crash adds T to both (the server must first expire the session)",
                negotiated, electedMs, servingMs, served ? "served" : "NOT served", moved, added);
        return follower;
    }

    /** Theory from docs/planner.md: sum of surpluses over floor, minus what the remainder absorbs. */
    static long minimumMoves(List<Integer> counts, int pids) {
        int n = counts.size();
        int f = pids / n;
        int r = pids % n;
        long surplus = 0;
        int above = 0;
        for (int k : counts) {
            if (k > f) {
                surplus += k - f;
                above++;
            }
        }
        return surplus - Math.min(r, above);
    }

    // ------------------------------------------------------------------ baselines

    /** One synchronous create per node (the seed's way); returns creates per second. */
    double syncCreates(String parent, int count) throws Exception {
        ensurePath(parent);
        byte[] data = pidData("p-sync");
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            admin.create(parent + "/n" + i, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        double perSec = count / ((System.nanoTime() - t0) / 1e9);
        deleteTree(parent);
        return perSec;
    }

    /** Asynchronous creates, 1,000 in flight; returns the milliseconds for {@code count} nodes. */
    double asyncCreates(String parent, int count) throws Exception {
        ensurePath(parent);
        byte[] data = pidData("p-async");
        Semaphore window = new Semaphore(1_000);
        CountDownLatch done = new CountDownLatch(count);
        AsyncCallback.StringCallback cb = (rc, path, ctx, created) -> {
            window.release();
            done.countDown();
        };
        long t0 = System.nanoTime();
        for (int i = 0; i < count; i++) {
            window.acquire();
            admin.create(parent + "/n" + i, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT, cb, null);
        }
        if (!done.await(300, TimeUnit.SECONDS)) {
            throw new IllegalStateException("async creates did not finish");
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        deleteTree(parent);
        return ms;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** {@code name=value} arguments over {@code opts}'s defaults; an unknown name is refused. */
    static void parseArgs(String[] args, Map<String, Integer> opts) {
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            if (!opts.containsKey(kv[0])) {
                throw new IllegalArgumentException("unknown argument " + arg + "; known: " + opts.keySet());
            }
            opts.put(kv[0], Integer.parseInt(kv[1]));
        }
    }

    // ------------------------------------------------------------------ simulated SDK instance

    /** Shared counters of every simulated instance. */
    static final class Tracker {
        final ConcurrentHashMap<String, String> holders = new ConcurrentHashMap<>();
        final AtomicLong lastAddedNanos = new AtomicLong();
        final AtomicLong firstRegisteredNanos = new AtomicLong(Long.MAX_VALUE);
        final AtomicInteger duplicates = new AtomicInteger();
        final AtomicLong addingAcks = new AtomicLong();
        final AtomicLong deletingAcks = new AtomicLong();
        /** Notifications of the instances' own acknowledgements, recognised by zxid and not read again. */
        final AtomicLong ownWritesNotReread = new AtomicLong();
    }

    /**
     * the client side of docs/design.md §4, minimally, the way the SDK reads and writes: registers its ephemeral
     * node, waits for the pids path in its data, then keeps one persistent recursive watch on the pids
     * node and answers every instruction stamped with its session (and an epoch not older than the
     * newest seen) with a versioned setData of {@link PidNode#acknowledged()}.
     *
     * <p>Requests are coalesced, never delayed: at most one read multi-op and one acknowledgement
     * multi-op are in flight; whatever becomes due meanwhile goes into the next one when the reply
     * comes. A notification about a node whose acknowledgement is in flight waits for that reply: if
     * its zxid is the one of our own write, the node is not read again. A multi-op refused because
     * one node changed meanwhile (BADVERSION) or vanished (NONODE) costs that node a re-read (or
     * nothing), and the others are sent again.
     *
     * <p>Concurrency: everything runs on the session's ZooKeeper event thread (watch events and
     * callbacks), so 1,000 instances need no thread of their own beyond ZooKeeper's two, and the
     * fields below need no lock.
     */
    static final class SimInstance implements Watcher {
        private static final int MAX_OPS = 200;

        final String id;
        final Tracker tracker;
        final Set<String> held = ConcurrentHashMap.newKeySet();
        private ZooKeeper zk;
        private long sessionId;
        private String instancePath;
        private volatile String pidsPath;
        private long maxEpoch;
        long registeredNanos;
        long registeredMillis;
        volatile long pidsSeenMillis;
        volatile long firstAckMillis;
        volatile long lastAckMillis;
        // event thread
        private final Set<String> toRead = new java.util.LinkedHashSet<>();
        private boolean readInFlight;
        private final Map<String, Ack> toAck = new java.util.LinkedHashMap<>();
        private boolean ackInFlight;
        /** Paths whose acknowledgement is in flight, with the zxids of notifications that came meanwhile. */
        private final Map<String, List<Long>> acking = new HashMap<>();

        private record Ack(String path, PidNode node, int version) {}

        SimInstance(String id, Tracker tracker) {
            this.id = id;
            this.tracker = tracker;
        }

        SimInstance start(String connectString) throws Exception {
            zk = connect(connectString, 10_000, this);
            sessionId = zk.getSessionId();
            instancePath = ROOT + LAYOUT.instance(MODULE, InstanceId.of(id));
            zk.create(
                    instancePath,
                    InstanceNode.registering(1, "bench").encode(),
                    ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.EPHEMERAL);
            registeredNanos = System.nanoTime();
            registeredMillis = System.currentTimeMillis();
            tracker.firstRegisteredNanos.accumulateAndGet(registeredNanos, Math::min);
            readSelf();
            return this;
        }

        @Override
        public void process(WatchedEvent event) {
            String path = event.getPath();
            if (path == null) {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected && pidsPath != null) {
                    rescan(pidsPath); // like the SDK: notifications are not replayed across a disconnection
                }
                return;
            }
            if (path.equals(instancePath)) {
                if (event.getType() == Watcher.Event.EventType.NodeDataChanged) {
                    readSelf();
                }
                return;
            }
            String root = pidsPath;
            if (root == null || !path.startsWith(root + "/")) {
                return;
            }
            switch (event.getType()) {
                case NodeCreated, NodeDataChanged -> {
                    List<Long> waiting = acking.get(path);
                    if (waiting != null) {
                        waiting.add(event.getZxid()); // decided when our write's reply says its zxid
                    } else {
                        read(path);
                    }
                }
                case NodeDeleted -> gone(path.substring(path.lastIndexOf('/') + 1));
                default -> {}
            }
        }

        private void readSelf() {
            zk.getData(
                    instancePath,
                    this,
                    (rc, path, ctx, data, stat) -> {
                        if (rc != 0 || pidsPath != null) {
                            return;
                        }
                        InstanceNode node = InstanceNode.decode(data);
                        if (node.hasPidsPath()) {
                            pidsSeenMillis = System.currentTimeMillis();
                            watchPids(ROOT + node.pidsPath());
                        }
                    },
                    null);
        }

        /**
         * One persistent recursive watch, then one listing for what was there before it. Like the SDK,
         * the listing is sent right behind the watch, not after its reply: ZooKeeper answers one
         * session's requests in order, so the listing sees every change the watch misses.
         */
        private void watchPids(String root) {
            pidsPath = root;
            zk.addWatch(
                    root, this, org.apache.zookeeper.AddWatchMode.PERSISTENT_RECURSIVE, (rc, path, ctx) -> {}, null);
            rescan(root);
        }

        /** Lists the pids node: forgets the PIDs gone, reads every node. */
        private void rescan(String root) {
            zk.getChildren(
                    root,
                    false,
                    (rc, p, ctx, children) -> {
                        if (rc == 0) {
                            Set<String> present = Set.copyOf(children);
                            for (String pid : List.copyOf(held)) {
                                if (!present.contains(pid)) {
                                    gone(pid);
                                }
                            }
                            // all of them in one read multi-op (as the SDK does), not the first alone
                            children.forEach(child -> toRead.add(root + "/" + child));
                            if (!readInFlight) {
                                sendReads();
                            }
                        }
                    },
                    null);
        }

        private void read(String path) {
            toRead.add(path);
            if (!readInFlight) {
                sendReads();
            }
        }

        private void sendReads() {
            if (toRead.isEmpty()) {
                readInFlight = false;
                return;
            }
            List<String> paths = new ArrayList<>();
            for (var it = toRead.iterator(); it.hasNext() && paths.size() < MAX_OPS; ) {
                paths.add(it.next());
                it.remove();
            }
            List<org.apache.zookeeper.Op> ops = new ArrayList<>();
            paths.forEach(p -> ops.add(org.apache.zookeeper.Op.getData(p)));
            readInFlight = true;
            zk.multi(
                    ops,
                    (rc, p, ctx, results) -> {
                        for (int i = 0; results != null && i < results.size(); i++) {
                            String path = paths.get(i);
                            var result = results.get(i);
                            if (result instanceof org.apache.zookeeper.OpResult.GetDataResult got) {
                                handle(path, PidNode.decode(got.getData()), got.getStat());
                            } else if (result instanceof org.apache.zookeeper.OpResult.ErrorResult error
                                    && error.getErr() == KeeperException.Code.NONODE.intValue()) {
                                gone(path.substring(path.lastIndexOf('/') + 1));
                            }
                        }
                        // the acknowledgements this reply made due go together (as the SDK's coalesced
                        // writes do), not the first one alone
                        if (!ackInFlight) {
                            sendAcks();
                        }
                        sendReads();
                    },
                    null);
        }

        private void handle(String path, PidNode node, Stat stat) {
            if (node.ownerSessionId() != sessionId || node.epoch().value() < maxEpoch || node.hasError()) {
                return;
            }
            maxEpoch = Math.max(maxEpoch, node.epoch().value());
            PidState state = node.state();
            if (!state.isInstruction() || acking.containsKey(path)) {
                return; // an acknowledgement in flight: its reply decides whether to read again
            }
            if (state == PidState.DELETING) {
                held.remove(node.pidId());
                tracker.holders.remove(node.pidId(), id);
            }
            toAck.put(path, new Ack(path, node, stat.getVersion()));
            acking.put(path, new ArrayList<>());
            // sent by the caller once the whole read reply is handled
        }

        private void sendAcks() {
            if (toAck.isEmpty()) {
                ackInFlight = false;
                return;
            }
            List<Ack> batch = new ArrayList<>();
            for (var it = toAck.values().iterator(); it.hasNext() && batch.size() < MAX_OPS; ) {
                batch.add(it.next());
                it.remove();
            }
            sendAcks(batch);
        }

        private void sendAcks(List<Ack> batch) {
            ackInFlight = true;
            List<org.apache.zookeeper.Op> ops = new ArrayList<>();
            batch.forEach(a -> ops.add(org.apache.zookeeper.Op.setData(
                    a.path(), a.node().acknowledged().encode(), a.version())));
            zk.multi(
                    ops,
                    (rc, p, ctx, results) -> {
                        if (rc == 0) {
                            for (int i = 0; i < batch.size(); i++) {
                                var set = (org.apache.zookeeper.OpResult.SetDataResult) results.get(i);
                                acked(batch.get(i), set.getStat().getMzxid());
                            }
                            sendAcks();
                            return;
                        }
                        // ZooKeeper names the first failing operation only; the others were not applied
                        int failed = -1;
                        for (int i = 0; results != null && i < results.size(); i++) {
                            int err = ((org.apache.zookeeper.OpResult.ErrorResult) results.get(i)).getErr();
                            if (err != 0 && err != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                                failed = i;
                                break;
                            }
                        }
                        if (failed < 0) {
                            batch.forEach(a -> refused(a, KeeperException.Code.CONNECTIONLOSS.intValue()));
                            sendAcks();
                            return;
                        }
                        refused(batch.get(failed), rc);
                        List<Ack> rest = new ArrayList<>(batch);
                        rest.remove(failed);
                        if (rest.isEmpty()) {
                            sendAcks();
                        } else {
                            sendAcks(rest);
                        }
                    },
                    null);
        }

        private void acked(Ack ack, long mzxid) {
            switch (ack.node().state()) {
                case ADDING -> {
                    tracker.addingAcks.incrementAndGet();
                    held.add(ack.node().pidId());
                    String before = tracker.holders.putIfAbsent(ack.node().pidId(), id);
                    if (before != null && !before.equals(id)) {
                        tracker.duplicates.incrementAndGet();
                    }
                    tracker.lastAddedNanos.accumulateAndGet(System.nanoTime(), Math::max);
                    lastAckMillis = System.currentTimeMillis();
                    if (firstAckMillis == 0) {
                        firstAckMillis = lastAckMillis;
                    }
                }
                case DELETING -> tracker.deletingAcks.incrementAndGet();
                default -> {}
            }
            List<Long> seen = acking.remove(ack.path());
            if (seen != null && seen.stream().anyMatch(zxid -> zxid != mzxid)) {
                read(ack.path()); // someone else wrote it too (the leader, later)
            }
            tracker.ownWritesNotReread.addAndGet(
                    seen == null ? 0 : seen.stream().filter(z -> z == mzxid).count());
        }

        private void refused(Ack ack, int rc) {
            acking.remove(ack.path());
            if (rc == KeeperException.Code.NONODE.intValue()) {
                gone(ack.node().pidId());
            } else {
                read(ack.path()); // BADVERSION (or unknown outcome): the node changed; read what it says now
            }
        }

        private void gone(String pid) {
            if (held.remove(pid)) {
                tracker.holders.remove(pid, id);
            }
        }

        void close() throws InterruptedException {
            zk.close();
        }
    }

    // ------------------------------------------------------------------ plumbing

    private ClusterMember startNode(String nodeId, Repositories repositories) {
        LeaderSettings settings = LeaderSettings.defaults().withGrace(Duration.ofMillis(1_200));
        int delayMs = opts.get("rebalanceDelayMs");
        if (delayMs >= 0) {
            settings = settings.withRebalanceDelay(Duration.ofMillis(delayMs));
        }
        AtomicLong ids = new AtomicLong(System.currentTimeMillis() << 12);
        ClusterMember node = ClusterMember.builder()
                .nodeId(nodeId)
                .connectString(server.getConnectString())
                .cluster(LAYOUT.cluster())
                .sessionTimeout(Duration.ofMillis(opts.get("leaderSessionMs")))
                .settings(settings)
                .repositories(repositories)
                .sealer(TestCluster::seal)
                .ids(ids::incrementAndGet)
                .build();
        node.start();
        return node;
    }

    static PidRecord account(String pid) {
        return new PidRecord(pid, MODULE, 10_000, 0, PidAvailability.ACTIVE, TestCluster.secret(pid), Map.of());
    }

    private static byte[] pidData(String pid) {
        return PidNode.instruction(
                        pid,
                        PidState.ADDING,
                        new Epoch(7),
                        0x1000031c3360002L,
                        new PidNode.AccountPayload(10_000, 0, TestCluster.secret(pid), Map.of()))
                .encode();
    }

    /** The leader's writer counters (multi-ops, operations), read through the package-private test hook. */
    private static long[] writerCounts(ClusterMember node) throws Exception {
        Method hook = ClusterMember.class.getDeclaredMethod("currentWriter");
        hook.setAccessible(true);
        FencedWriter writer;
        try {
            writer = (FencedWriter) hook.invoke(node);
        } catch (java.lang.reflect.InvocationTargetException e) {
            return new long[] {0, 0}; // not leading at this moment (its session was lost under load)
        }
        return writer == null ? new long[] {0, 0} : new long[] {writer.multisSent(), writer.opsSent()};
    }

    /**
     * The server's request and response counters ({@code PacketsReceived}, {@code PacketsSent} of its
     * JMX {@code ZooKeeperServerBean}): what every client sent (requests and pings) and every packet
     * the server sent back (replies and watch notifications). Load-independent, unlike the time.
     */
    private static long[] packets() throws Exception {
        javax.management.MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        for (javax.management.ObjectName name :
                jmx.queryNames(new javax.management.ObjectName("org.apache.ZooKeeperService:name0=*"), null)) {
            if (name.getKeyPropertyList().size() == 1) {
                return new long[] {
                    ((Number) jmx.getAttribute(name, "PacketsReceived")).longValue(),
                    ((Number) jmx.getAttribute(name, "PacketsSent")).longValue()
                };
            }
        }
        return new long[] {0, 0};
    }

    /**
     * CPU time used so far (ns) by the whole process and by groups of live threads: the pid-server
     * nodes' serial executors, the embedded ZooKeeper server, the simulated instances' ZooKeeper
     * clients (created by the starter pool), the other ZooKeeper/Curator clients (pid-server nodes,
     * admin), and the JVM's own threads by kind where Linux tells ({@link VmThreadCpu}: JIT, GC, VM).
     * The process total less all of these is threads that ended and what ran between the readings
     * (without the kinds: mostly JIT compilation and GC). A less load-dependent complement to the
     * wall-clock times (contention and JIT still inflate it): what the hand-out costs the 2 cores.
     */
    private static Map<String, Long> cpuByGroup() {
        var threads = ManagementFactory.getThreadMXBean();
        Map<String, Long> cpu = new java.util.TreeMap<>();
        for (java.lang.management.ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            long ns = threads.getThreadCpuTime(info.getThreadId());
            if (ns > 0) {
                cpu.merge(cpuGroup(info.getThreadName()), ns, Long::sum);
                cpu.merge("java threads", ns, Long::sum);
            }
        }
        VmThreadCpu.byKind().forEach((kind, ns) -> cpu.put(VM_PREFIX + kind, ns));
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
            cpu.put("process", sun.getProcessCpuTime());
        }
        return cpu;
    }

    private static String cpuGroup(String thread) {
        if (thread.startsWith("pidpool-node-")) {
            return "leader/follower serial";
        }
        boolean client = thread.contains("-SendThread") || thread.contains("-EventThread");
        if (client && thread.startsWith("pool-")) {
            return "sims' ZooKeeper clients";
        }
        if (client || thread.startsWith("Curator-")) {
            return "nodes' ZooKeeper clients";
        }
        if (thread.startsWith("NIO")
                || thread.startsWith("SyncThread")
                || thread.startsWith("ProcessThread")
                || thread.startsWith("CommitProc")
                || thread.startsWith("RequestThrottler")
                || thread.startsWith("SessionTracker")
                || thread.startsWith("ConnnectionExpirer")) {
            return "ZooKeeper server";
        }
        return "other Java threads";
    }

    private static String cpuLine(Map<String, Long> before, Map<String, Long> after, int pids) {
        long process = after.getOrDefault("process", 0L) - before.getOrDefault("process", 0L);
        long java = after.getOrDefault("java threads", 0L) - before.getOrDefault("java threads", 0L);
        StringBuilder line = new StringBuilder(String.format(
                Locale.ROOT,
                "CPU in the phase: process %.2f s = %.0f us per PID; of it",
                process / 1e9,
                process / 1e3 / pids));
        long vm = 0;
        for (String group : after.keySet()) {
            if (group.equals("process") || group.equals("java threads")) {
                continue;
            }
            long used = after.get(group) - before.getOrDefault(group, 0L);
            if (group.startsWith(VM_PREFIX)) {
                vm += used;
            }
            line.append(String.format(Locale.ROOT, " %s %.2f s (%.0f us/PID);", group, used / 1e9, used / 1e3 / pids));
        }
        line.append(String.format(
                Locale.ROOT,
                " %s %.2f s (%.0f us/PID)",
                vm == 0 ? "JIT, GC and VM" : "other (ended threads, between readings)",
                (process - java - vm) / 1e9,
                (process - java - vm) / 1e3 / pids));
        return line.toString();
    }

    /** The server's last zxid, read as the mzxid of a write to a probe node (one transaction). */
    private long zxid() throws Exception {
        ensurePath("/zxid-probe");
        return admin.setData("/zxid-probe", new byte[0], -1).getMzxid();
    }

    private void ensurePath(String path) throws Exception {
        StringBuilder at = new StringBuilder();
        for (String part : path.substring(1).split("/")) {
            at.append('/').append(part);
            try {
                admin.create(at.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // there already
            }
        }
    }

    private void deleteTree(String path) throws Exception {
        try {
            org.apache.zookeeper.ZKUtil.deleteRecursive(admin, path, 1_000);
        } catch (KeeperException.NoNodeException e) {
            // gone
        }
    }

    private static int[] spread(List<SimInstance> sims) {
        int min = Integer.MAX_VALUE;
        int max = 0;
        int sum = 0;
        for (SimInstance sim : sims) {
            int n = sim.held.size();
            min = Math.min(min, n);
            max = Math.max(max, n);
            sum += n;
        }
        return new int[] {min, max, sum};
    }

    private long heapAfterGc() {
        if (opts.get("heap") == 0) {
            return 0; // skipped: three full GCs in the JVM that runs the ZooKeeper server can expire sessions
        }
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    static TestingServer startServer() throws Exception {
        // like TestZooKeeper, plus no limit on connections per client address (1,000 sessions from 127.0.0.1)
        InstanceSpec spec = new InstanceSpec(
                null,
                -1,
                -1,
                -1,
                true,
                -1,
                100,
                -1,
                Map.of("clientPortAddress", "127.0.0.1", "maxSessionTimeout", "60000", "maxClientCnxns", "0"),
                "127.0.0.1");
        return new TestingServer(spec, true);
    }

    static ZooKeeper connect(String connectString, int sessionMs, Watcher delegate) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connectString, sessionMs, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
            if (delegate != null) {
                delegate.process(event);
            }
        });
        if (!connected.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("could not connect to " + connectString);
        }
        return zk;
    }

    private static void awaitTrue(String what, int seconds, BooleanSupplier condition) throws InterruptedException {
        if (!awaitQuietly(seconds, condition)) {
            throw new IllegalStateException("timed out after " + seconds + " s waiting for " + what);
        }
    }

    /**
     * Polls every 2 ms until the condition holds or the deadline passes. A condition that throws (a
     * node too busy to answer its query in time, under load) counts as not yet true.
     */
    private static boolean awaitQuietly(int seconds, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < deadline) {
            if (holds(condition)) {
                return true;
            }
            Thread.sleep(2);
        }
        return holds(condition);
    }

    private static boolean holds(BooleanSupplier condition) {
        try {
            return condition.getAsBoolean();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void line(String format, Object... args) {
        String text = String.format(Locale.ROOT, format, args);
        report.add(text);
        System.out.println(text);
    }
}
