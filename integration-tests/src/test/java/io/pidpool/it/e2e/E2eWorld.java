package io.pidpool.it.e2e;

import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.Repositories;
import io.pidpool.it.leader.ServerLeaderUnderTest;
import io.pidpool.it.platform.PlatformServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One end-to-end scenario's world on a given ZooKeeper: a fresh cluster name, the recording
 * platform, {@code servers} real leader nodes ({@link ServerLeaderUnderTest}) and in-process SDK
 * instances. {@link #close()} closes everything, instances first.
 */
final class E2eWorld implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(E2eWorld.class);
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    /**
     * The SDK instances' session timeout. Larger than the fault scenarios' 3 s: with thousands of PID
     * acknowledgements queued on one loaded test JVM (three leader nodes, the ZooKeeper server and H2
     * share it), a ZooKeeper reply can take longer than 2T/3 at T = 3 s, and the SDK then rightly
     * suspends and revokes everything (seen in development), which would blur the churn assertions.
     */
    static final Duration SDK_T = Duration.ofSeconds(6);
    /** G = T/3 + L with L = 500 ms. */
    static final Duration GRACE = SDK_T.dividedBy(3).plusMillis(500);

    static final Duration WAIT = Duration.ofSeconds(60);

    final String connectString;
    final String cluster;
    final String scenario;
    final PlatformServer platform = PlatformServer.start();
    final ServerLeaderUnderTest leader;
    final List<SdkInstance> instances = new ArrayList<>();

    E2eWorld(String connectString, String scenario, int servers, UnaryOperator<Repositories> wrap) {
        this(connectString, scenario, servers, wrap, Duration.ZERO);
    }

    /** @param rebalanceDelay how long the leader keeps a departed instance's share for a replacement */
    E2eWorld(
            String connectString,
            String scenario,
            int servers,
            UnaryOperator<Repositories> wrap,
            Duration rebalanceDelay) {
        this.connectString = connectString;
        this.scenario = scenario;
        this.cluster = "e" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        this.leader = new ServerLeaderUnderTest(connectString, cluster, GRACE, servers, wrap)
                .withRebalanceDelay(rebalanceDelay);
        leader.start();
    }

    E2eWorld(String connectString, String scenario, int servers) {
        this(connectString, scenario, servers, UnaryOperator.identity());
    }

    static List<String> pids(String prefix, int count) {
        return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
    }

    SdkInstance instance(ModuleKey module, String name) {
        return instance(module, name, connectString);
    }

    /** An instance that reaches ZooKeeper through {@code via} (e.g. a proxy of its own). */
    SdkInstance instance(ModuleKey module, String name, String via) {
        SdkInstance instance = new SdkInstance(
                name,
                module,
                via,
                cluster,
                platform.address(),
                leader.secretKey().orElseThrow(),
                SDK_T);
        instances.add(instance);
        return instance.start();
    }

    void awaitAnswered(List<SdkInstance> which) {
        await("handshakes").atMost(WAIT).until(() -> which.stream().allMatch(SdkInstance::answered));
    }

    List<SdkInstance> of(ModuleKey module) {
        return instances.stream().filter(i -> i.module().equals(module)).toList();
    }

    /** Every PID held by exactly one instance of the module (and nothing else), counts within 1. */
    boolean settled(ModuleKey module, List<String> pids) {
        Set<String> all = new HashSet<>();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (SdkInstance instance : of(module)) {
            Set<String> held = instance.held();
            if (!instance.client().heldPids().equals(held)) {
                return false;
            }
            for (String pid : held) {
                if (!all.add(pid)) {
                    return false;
                }
            }
            min = Math.min(min, held.size());
            max = Math.max(max, held.size());
        }
        return all.equals(new HashSet<>(pids)) && max - min <= 1;
    }

    void awaitSettled(ModuleKey module, List<String> pids) {
        await(module + " settled")
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(50))
                .conditionEvaluationListener(c -> {
                    if (c.getRemainingTimeInMS() < 600) {
                        log.warn("{}: {}", scenario, describe(module));
                    }
                })
                .until(() -> settled(module, pids));
    }

    /** PID to the instance holding it (listener view), for the module's instances. */
    Map<String, String> holders(ModuleKey module) {
        Map<String, String> holders = new TreeMap<>();
        for (SdkInstance instance : of(module)) {
            instance.held().forEach(pid -> holders.put(pid, instance.name()));
        }
        return holders;
    }

    String describe(ModuleKey module) {
        Map<String, Integer> counts = new TreeMap<>();
        of(module).forEach(i -> counts.put(i.name(), i.held().size()));
        return module + " " + counts + " leader view "
                + leader.assignments(module).size();
    }

    void assertSafety() {
        platform.assertNoDoubleLogin();
        platform.assertNoViolations();
    }

    /**
     * The fewest PIDs that must move when instances join: the balanced targets (n/k, the first n%k
     * one higher) go biggest-first to the instances that already hold most; what they keep stays.
     */
    static int minimalMoves(List<Integer> heldBefore, int joining) {
        int n = heldBefore.stream().mapToInt(Integer::intValue).sum();
        int k = heldBefore.size() + joining;
        List<Integer> sorted = new ArrayList<>(heldBefore);
        sorted.sort((a, b) -> Integer.compare(b, a));
        int kept = 0;
        for (int i = 0; i < sorted.size(); i++) {
            int target = n / k + (i < n % k ? 1 : 0);
            kept += Math.min(sorted.get(i), target);
        }
        return n - kept;
    }

    /** Logs a measurement and appends it to {@code target/fault-timings.md}. */
    void note(String what, String value) {
        log.info("TIMING {}: {} = {}", scenario, what, value);
        try {
            Files.writeString(
                    Path.of("target", "fault-timings.md"),
                    "| " + scenario + " | " + what + " | " + value + " |\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            log.warn("could not record timing: {}", e.toString());
        }
    }

    void timing(String what, long nanos) {
        note(what, Math.round(nanos / 1e6) + " ms");
    }

    static Map<String, Integer> counts(Map<String, String> holders) {
        Map<String, Integer> counts = new HashMap<>();
        holders.values().forEach(i -> counts.merge(i, 1, Integer::sum));
        return counts;
    }

    @Override
    public void close() {
        for (SdkInstance instance : instances) {
            try {
                instance.close();
            } catch (RuntimeException e) {
                log.warn("closing {}: {}", instance.name(), e.toString());
            }
        }
        leader.close();
        platform.close();
    }
}
