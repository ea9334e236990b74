package io.pidpool.it.bench;

import static io.pidpool.it.bench.AllocationBenchmark.LAYOUT;
import static io.pidpool.it.bench.AllocationBenchmark.MODULE;
import static io.pidpool.it.bench.AllocationBenchmark.ROOT;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.it.bench.AllocationBenchmark.SimInstance;
import io.pidpool.it.bench.AllocationBenchmark.Tracker;
import io.pidpool.it.zk.ZooKeepers;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.testing.TestCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/**
 * Leader failover at scale without the hand-out: {@link AllocationBenchmark}'s set-up (one
 * curator-test server, H2, one module, {@link SimInstance}s), but the PID nodes are written ADDED
 * directly (round robin, each stamped with its instance's session), as a leader would have left them,
 * so a 100,000-PID failover is measured in a minute instead of after a hand-out of several minutes.
 *
 * <p>Per round: a follower joins and catches up (its read model shows every PID ADDED), one new PID
 * is inserted into the database, the leader's session is terminated on the server (JMX), and the time
 * until the follower leads and until it hands the new PID out (ADDED at an instance) is measured, with
 * the PIDs moved (DELETING acknowledged, ADDING acknowledged beyond the new PID). The old leader is
 * closed, the new one re-stamps the assignment rows, and the next round starts with a fresh follower.
 *
 * <p>Even rounds close the old leader's node right after its session is terminated (a crashed
 * process); odd rounds leave it running, so that it reconnects with a new session and its watcher
 * re-reads the whole tree from the same server (a process that paused or was cut off).
 *
 * <p>Arguments ({@code key=value}): {@code pids} (100000), {@code instances} (1000), {@code rounds}
 * (2), {@code leaderSessionMs} (5000), {@code catchUpSec} (300: how long a follower may take to load
 * the tree). Not a test: it prints what it measured. Command:
 * docs/history/benchmarks-2026-11.md §5.
 */
public final class FailoverBenchmark {
    private FailoverBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, Integer> opts =
                new HashMap<>(Map.of("pids", 100_000, "instances", 1_000, "rounds", 2, "leaderSessionMs", 5_000));
        opts.put("catchUpSec", 300);
        AllocationBenchmark.parseArgs(args, opts);
        int pids = opts.get("pids");
        int instances = opts.get("instances");
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        List<String> report = new ArrayList<>();
        try (TestingServer server = AllocationBenchmark.startServer();
                Database database = Database.open("jdbc:h2:mem:failover;DB_CLOSE_DELAY=-1", "sa", "")) {
            ZooKeeper admin = AllocationBenchmark.connect(server.getConnectString(), 30_000, null);
            Repositories repos = database.repositories(Clock.systemUTC());
            repos.modules().put(ModuleConfig.of(MODULE, Math.min(instances, ModuleConfig.MAX_SERVERS)));
            List<PidRecord> accounts = new ArrayList<>();
            List<PidRecord> batch = new ArrayList<>();
            for (int i = 0; i < pids; i++) {
                PidRecord account = AllocationBenchmark.account("pf-" + i);
                accounts.add(account);
                batch.add(account);
                if (batch.size() == 5_000 || i == pids - 1) {
                    repos.pids().insertAll(batch);
                    batch.clear();
                }
            }
            StringBuilder at = new StringBuilder();
            for (String part : (ROOT + LAYOUT.module(MODULE)).substring(1).split("/")) {
                at.append('/').append(part);
                try {
                    admin.create(at.toString(), new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
                } catch (KeeperException.NodeExistsException e) {
                    // there already
                }
            }
            var tracker = new Tracker();
            ExecutorService starters = Executors.newFixedThreadPool(8);
            List<Future<SimInstance>> started = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                String id = "simf-" + i;
                started.add(starters.submit(() -> new SimInstance(id, tracker).start(server.getConnectString())));
            }
            List<SimInstance> sims = new ArrayList<>();
            for (Future<SimInstance> f : started) {
                sims.add(f.get(120, TimeUnit.SECONDS));
            }
            starters.shutdown();
            long t = System.nanoTime();
            prefill(admin, sims, accounts);
            log("prefilled %d PID nodes ADDED under %d instances in %.0f ms", pids, instances, ms(t));

            ClusterMember leader = startNode("node-0", server, repos, opts);
            await("first leader", 120, leader::isLeader);
            awaitRows(repos, pids, leader.epoch());
            log(
                    "first leader serves; every row stamped with epoch %d",
                    leader.epoch().value());
            for (int round = 1; round <= opts.get("rounds"); round++) {
                ClusterMember follower = startNode("node-" + round, server, repos, opts);
                t = System.nanoTime();
                await(
                        "follower view",
                        opts.get("catchUpSec"),
                        200,
                        () -> follower.pids(MODULE, PidState.ADDED).size() >= pids);
                double catchUpMs = ms(t);
                String probe = "pf-probe-" + round;
                repos.pids().insertAll(List.of(AllocationBenchmark.account(probe)));
                long deletes0 = tracker.deletingAcks.get();
                long adds0 = tracker.addingAcks.get();
                long session =
                        leader.curator().getZookeeperClient().getZooKeeper().getSessionId();
                String load = loadAverage();
                log("round %d: terminating the leader's session (load %s)", round, load);
                long t0 = System.nanoTime();
                if (!ZooKeepers.terminateSession(session)) {
                    throw new IllegalStateException("could not terminate the leader's session");
                }
                // even rounds: the old leader's process is gone too (a crash); odd rounds: it lives on,
                // reconnects with a new session and re-reads the tree, as after a long pause
                boolean crash = round % 2 == 0;
                Thread closer = null;
                if (crash) {
                    // on its own thread: a crash takes no time, but an orderly close does, and the
                    // successor's clock already runs
                    ClusterMember crashed = leader;
                    closer = new Thread(crashed::close, "crash-" + round);
                    closer.start();
                }
                await("new leader", 60, follower::isLeader);
                double electedMs = ms(t0);
                await("new PID served", 60, () -> tracker.holders.containsKey(probe));
                double servedMs = ms(t0);
                log("round %d: leads after %.0f ms, serves after %.0f ms", round, electedMs, servedMs);
                long quietUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
                await("quiet", 5, () -> System.nanoTime() > quietUntil);
                String line = String.format(
                        Locale.ROOT,
                        "round %d (%d PIDs / %d instances, old leader %s, load %s): follower caught up in %.0f ms; successor leads "
                                + "after %.0f ms, hands out the new PID after %.0f ms; PIDs moved %d, ADDING "
                                + "acknowledged %d (1 = the new PID)",
                        round,
                        pids,
                        instances,
                        crash ? "closed at once (crash)" : "alive (reconnects, re-reads the tree)",
                        load,
                        catchUpMs,
                        electedMs,
                        servedMs,
                        tracker.deletingAcks.get() - deletes0,
                        tracker.addingAcks.get() - adds0);
                report.add(line);
                log("%s", line);
                if (closer != null) {
                    closer.join();
                } else {
                    leader.close();
                }
                leader = follower;
                awaitRows(repos, pids + round, leader.epoch());
            }
            leader.close();
            for (SimInstance sim : sims) {
                sim.close();
            }
            admin.close();
        }
        System.out.println();
        System.out.println("==== results ====");
        report.forEach(System.out::println);
        System.exit(0); // daemon-less ZooKeeper client threads of terminated sessions
    }

    /** Writes every instance's pids node and its share of ADDED PID nodes, then the pids path into its node. */
    private static void prefill(ZooKeeper admin, List<SimInstance> sims, List<PidRecord> accounts) throws Exception {
        Semaphore window = new Semaphore(2_000);
        AtomicInteger failures = new AtomicInteger();
        List<long[]> sessions = new ArrayList<>();
        for (SimInstance sim : sims) {
            String instancePath = ROOT + LAYOUT.instance(MODULE, InstanceId.of(sim.id));
            sessions.add(new long[] {admin.exists(instancePath, false).getEphemeralOwner()});
            String pidsPath = ROOT + LAYOUT.pids(MODULE, InstanceId.of(sim.id));
            admin.create(pidsPath, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        CountDownLatch done = new CountDownLatch(accounts.size());
        AsyncCallback.StringCallback cb = (rc, path, ctx, name) -> {
            if (rc != 0) {
                failures.incrementAndGet();
            }
            window.release();
            done.countDown();
        };
        for (int i = 0; i < accounts.size(); i++) {
            PidRecord account = accounts.get(i);
            int at = i % sims.size();
            InstanceId id = InstanceId.of(sims.get(at).id);
            byte[] data = new PidNode(
                            account.id(),
                            PidState.ADDED,
                            new Epoch(1),
                            sessions.get(at)[0],
                            new PidNode.AccountPayload(
                                    account.monthlyQuota(),
                                    account.overageAllowance(),
                                    account.secret(),
                                    account.attributes()),
                            "")
                    .encode();
            window.acquire();
            admin.create(
                    ROOT + LAYOUT.pid(MODULE, id, account.id()),
                    data,
                    ZooDefs.Ids.OPEN_ACL_UNSAFE,
                    CreateMode.PERSISTENT,
                    cb,
                    null);
        }
        if (!done.await(300, TimeUnit.SECONDS) || failures.get() > 0) {
            throw new IllegalStateException("prefill failed: " + failures.get() + " creates failed");
        }
        for (SimInstance sim : sims) {
            InstanceId id = InstanceId.of(sim.id);
            admin.setData(
                    ROOT + LAYOUT.instance(MODULE, id),
                    InstanceNode.registering(1, "bench")
                            .withPidsPath(LAYOUT.pids(MODULE, id))
                            .encode(),
                    -1);
        }
    }

    /** Waits until every row is stamped with {@code epoch} (the new leader re-stamps in chunks). */
    private static void awaitRows(Repositories repos, int rows, Epoch epoch) throws InterruptedException {
        long t = System.nanoTime();
        await("rows of epoch " + epoch.value(), 300, 500, () -> {
            List<Assignment> all = repos.assignments().findAll();
            return all.size() >= rows && all.stream().allMatch(a -> a.epoch().equals(epoch));
        });
        log("rows stamped with epoch %d after %.0f ms", epoch.value(), ms(t));
    }

    private static ClusterMember startNode(
            String nodeId, TestingServer server, Repositories repos, Map<String, Integer> opts) {
        AtomicLong ids = new AtomicLong(System.currentTimeMillis() << 12);
        ClusterMember node = ClusterMember.builder()
                .nodeId(nodeId)
                .connectString(server.getConnectString())
                .cluster(LAYOUT.cluster())
                .sessionTimeout(Duration.ofMillis(opts.get("leaderSessionMs")))
                .settings(LeaderSettings.defaults().withGrace(Duration.ofMillis(1_200)))
                .repositories(repos)
                .sealer(TestCluster::seal)
                .ids(ids::incrementAndGet)
                .build();
        node.start();
        return node;
    }

    private static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).split(" ");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (Exception e) {
            return "?";
        }
    }

    private static double ms(long since) {
        return (System.nanoTime() - since) / 1e6;
    }

    private static void await(String what, int seconds, BooleanSupplier condition) throws InterruptedException {
        await(what, seconds, 2, condition);
    }

    private static void await(String what, int seconds, int pollMs, BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + seconds + " s waiting for " + what);
            }
            Thread.sleep(pollMs);
        }
    }

    private static void log(String format, Object... args) {
        System.err.println(LocalTime.now() + " BENCH " + String.format(Locale.ROOT, format, args));
    }
}
