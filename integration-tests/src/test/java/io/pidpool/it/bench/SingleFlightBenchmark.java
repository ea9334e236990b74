package io.pidpool.it.bench;

import io.pidpool.client.SingleFlight;
import io.pidpool.core.singleflight.FlightKeys;
import io.pidpool.it.singleflight.FlightProcess;
import io.pidpool.it.singleflight.SingleFlightMain;
import io.pidpool.it.zk.ZooKeepers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The cluster single-flight across 3 JVMs: this one and two {@link SingleFlightMain} children, each a
 * participant with its own ZooKeeper session (curator-test server on 127.0.0.1). Each round fires
 * {@code requests} concurrent requests for a fresh key in every JVM at once; the work takes {@code
 * workMs}. Reports per round how many times the work ran (must be 1) and, for every request, when it
 * was answered: in the holder's JVM (callers coalesced onto the holder's flight) and in the other
 * JVMs (waiters on the lock node), measured from the end of the work (wall-clock microseconds, one
 * machine) and from the result node's mtime (ZooKeeper's millisecond stamp of the publish).
 *
 * <p>Baselines, same run, same server: a plain {@code getData} round trip, and the shortest chain a
 * remote waiter can be answered by after the work returned: {@code setData} + {@code delete} on one
 * session, the {@code exists} watch firing on another, its {@code getData}.
 *
 * <p>Arguments ({@code key=value}): {@code rounds} (100), {@code warmup} (200, for the JIT), {@code requests} (16
 * per JVM), {@code workMs} (20), {@code baseline} (500 iterations). Not a test: nothing asserts.
 */
public final class SingleFlightBenchmark {
    private SingleFlightBenchmark() {}

    public static void main(String[] args) throws Exception {
        Map<String, Integer> o =
                new HashMap<>(Map.of("rounds", 100, "warmup", 200, "requests", 16, "workMs", 20, "baseline", 500));
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            if (!o.containsKey(kv[0])) {
                throw new IllegalArgumentException("unknown argument " + arg + "; known: " + o.keySet());
            }
            o.put(kv[0], Integer.parseInt(kv[1]));
        }
        int requests = o.get("requests");
        int workMs = o.get("workMs");
        try (TestingServer server = ZooKeepers.standalone();
                SingleFlight local = SingleFlight.builder()
                        .connectString(server.getConnectString())
                        .build()) {
            String connect = server.getConnectString();
            List<FlightProcess> children = List.of(
                    FlightProcess.start("bench-flight-1", List.of("connect=" + connect, "sessionTimeoutMs=5000")),
                    FlightProcess.start("bench-flight-2", List.of("connect=" + connect, "sessionTimeoutMs=5000")));
            try {
                for (FlightProcess c : children) {
                    c.awaitLine("STARTED", Duration.ofSeconds(60));
                }
                ZooKeeper zk = connect(connect);
                ZooKeeper zk2 = connect(connect);
                System.out.printf(
                        Locale.ROOT,
                        "single-flight across 3 JVMs: %d requests per JVM per round, work %d ms, %d rounds after %d"
                                + " warm-up rounds; %d cores, java %s%n",
                        requests,
                        workMs,
                        o.get("rounds"),
                        o.get("warmup"),
                        Runtime.getRuntime().availableProcessors(),
                        System.getProperty("java.version"));
                List<Double> remoteFromWork = new ArrayList<>();
                List<Double> remoteFromMtime = new ArrayList<>();
                List<Double> holderFromWork = new ArrayList<>();
                List<Integer> executions = new ArrayList<>();
                int errors = 0;
                int answeredTotal = 0;
                for (int r = 0; r < o.get("warmup") + o.get("rounds"); r++) {
                    String key = "bench:" + r;
                    List<String> mine = new CopyOnWriteArrayList<>();
                    for (FlightProcess c : children) {
                        c.send("go " + key + " " + requests + " " + workMs);
                    }
                    SingleFlightMain.fire(local, key, requests, workMs, "from-bench", mine::add);
                    for (FlightProcess c : children) {
                        c.awaitLine("FIRED " + key, Duration.ofSeconds(60));
                    }
                    Stat stat = zk.exists("/pidpool/default" + FlightKeys.resultPath(key), false);
                    List<List<String>> perJvm = List.of(
                            mine,
                            only(children.get(0).lines(), key),
                            only(children.get(1).lines(), key));
                    int ran = 0;
                    int holder = -1;
                    long workEnd = 0;
                    for (int j = 0; j < 3; j++) {
                        for (String l : perJvm.get(j)) {
                            if (l.startsWith("RAN " + key + " ")) {
                                ran++;
                                holder = j;
                                workEnd = Long.parseLong(l.split(" ")[3]);
                            }
                        }
                    }
                    if (r < o.get("warmup")) {
                        continue;
                    }
                    executions.add(ran);
                    for (int j = 0; j < 3; j++) {
                        for (String l : perJvm.get(j)) {
                            if (!l.startsWith("ANSWERED " + key + " ")) {
                                continue;
                            }
                            String[] w = l.split(" ");
                            answeredTotal++;
                            if (!w[3].equals("ok")) {
                                errors++;
                                continue;
                            }
                            long at = Long.parseLong(w[2]);
                            if (j == holder) {
                                holderFromWork.add((at - workEnd) / 1000.0);
                            } else {
                                remoteFromWork.add((at - workEnd) / 1000.0);
                                remoteFromMtime.add((at - stat.getMtime() * 1000L) / 1000.0);
                            }
                        }
                    }
                }
                List<Double> rtt = new ArrayList<>();
                List<Double> chain = new ArrayList<>();
                baselines(zk, zk2, o.get("baseline"), rtt, chain);
                zk.close();
                zk2.close();

                System.out.println();
                System.out.printf(
                        Locale.ROOT,
                        "executions per round: %s (rounds with exactly one: %d of %d); answered %d of %d, errors %d%n",
                        executions,
                        executions.stream().filter(e -> e == 1).count(),
                        executions.size(),
                        answeredTotal,
                        executions.size() * 3 * requests,
                        errors);
                System.out.println();
                System.out.println("| measured | n | p50 ms | p99 ms | max ms |");
                System.out.println("|---|---|---|---|---|");
                row("other JVMs' waiters answered, after the work returned", remoteFromWork);
                row("other JVMs' waiters answered, after the result node's mtime (1 ms stamp)", remoteFromMtime);
                row("holder JVM's callers answered, after the work returned", holderFromWork);
                row("baseline: getData round trip", rtt);
                row("baseline: setData + delete, watch fires on a 2nd session, its getData", chain);
            } finally {
                for (FlightProcess c : children) {
                    c.close();
                }
            }
        }
    }

    private static List<String> only(List<String> lines, String key) {
        return lines.stream().filter(l -> l.contains(" " + key + " ")).toList();
    }

    private static void baselines(ZooKeeper a, ZooKeeper b, int n, List<Double> rtt, List<Double> chain)
            throws Exception {
        a.create("/bench-sf", new byte[64], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        for (int i = 0; i < n + n / 5; i++) {
            long t0 = System.nanoTime();
            b.getData("/bench-sf", false, null);
            if (i >= n / 5) {
                rtt.add((System.nanoTime() - t0) / 1e6);
            }
        }
        for (int i = 0; i < n + n / 5; i++) {
            String lock = "/bench-sf/lock";
            a.create(lock, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
            CountDownLatch fired = new CountDownLatch(1);
            b.exists(lock, e -> fired.countDown());
            long t0 = System.nanoTime();
            a.setData("/bench-sf", new byte[64], -1);
            a.delete(lock, -1);
            fired.await(10, TimeUnit.SECONDS);
            b.getData("/bench-sf", false, null);
            if (i >= n / 5) {
                chain.add((System.nanoTime() - t0) / 1e6);
            }
        }
    }

    private static void row(String what, List<Double> values) {
        List<Double> v = new ArrayList<>(values);
        Collections.sort(v);
        if (v.isEmpty()) {
            System.out.printf(Locale.ROOT, "| %s | 0 | - | - | - |%n", what);
            return;
        }
        System.out.printf(
                Locale.ROOT,
                "| %s | %d | %.2f | %.2f | %.2f |%n",
                what,
                v.size(),
                pct(v, 0.50),
                pct(v, 0.99),
                v.get(v.size() - 1));
    }

    private static double pct(List<Double> sorted, double p) {
        return sorted.get(Math.max(0, (int) Math.ceil(p * sorted.size()) - 1));
    }

    private static ZooKeeper connect(String connect) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 30_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("cannot connect to " + connect);
        }
        return zk;
    }
}
