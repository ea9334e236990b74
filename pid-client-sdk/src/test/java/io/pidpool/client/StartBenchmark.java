package io.pidpool.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestZooKeeper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * How long {@link PidClient#start()} takes until registered, against the least a registration needs:
 * a bare Curator client that connects and creates one ephemeral node (the baseline, same ZooKeeper,
 * same JVM). Not a test; runs only with {@code -Dpidpool.bench=true}:
 *
 * <pre>
 * mvn -B -o verify -pl pid-client-sdk -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=StartBenchmark -Dfailsafe.failIfNoSpecifiedTests=false -Dpidpool.bench=true
 * </pre>
 *
 * Warm: this JVM, one warm-up round, then {@code ROUNDS} interleaved rounds, medians. Cold: {@code
 * COLD} fresh JVMs each ({@link AbandonedClientMain} {@code start-only}), median, class loading
 * included. Prints ratios to the baseline; asserts nothing about time.
 */
@EnabledIfSystemProperty(named = "pidpool.bench", matches = "true")
class StartBenchmark {
    private static final int ROUNDS = Integer.getInteger("pidpool.bench.rounds", 15);
    private static final int COLD = Integer.getInteger("pidpool.bench.cold", 3);
    private static final Pattern START = Pattern.compile("START build ([0-9.]+) start ([0-9.]+)");

    @Test
    void startUntilRegistered() throws Exception {
        try (TestingServer zk = TestZooKeeper.start();
                SdkHarness harness = new SdkHarness(zk.getConnectString())) {
            String redis = RedisSupport.sharedUrl();
            double[][] warm = new double[3][ROUNDS];
            for (int round = -1; round < ROUNDS; round++) {
                double base = bare(zk.getConnectString(), harness.cluster());
                double zkOnly = start(harness, null);
                double withRedis = start(harness, redis);
                if (round >= 0) {
                    warm[0][round] = base;
                    warm[1][round] = zkOnly;
                    warm[2][round] = withRedis;
                }
            }
            List<String> lines = new ArrayList<>();
            double base = median(warm[0]);
            lines.add(String.format(Locale.ROOT, "warm, median of %d rounds:", ROUNDS));
            lines.add(row("bare Curator connect + create (baseline)", base, base));
            lines.add(row("start(), ZooKeeper only", median(warm[1]), base));
            lines.add(row("start(), with redisAddress", median(warm[2]), base));
            lines.add(String.format(Locale.ROOT, "cold JVM (class loading included), median of %d:", COLD));
            for (String r : new String[] {"-", redis}) {
                double[] cold = new double[COLD];
                for (int i = 0; i < COLD; i++) {
                    cold[i] = coldStart(zk.getConnectString(), harness.cluster(), r);
                }
                lines.add(row(
                        r.equals("-") ? "start(), ZooKeeper only" : "start(), with redisAddress", median(cold), base));
            }
            String report = String.join("\n", lines);
            System.out.println(report);
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target", "benchmarks-start.txt"), report + "\n");
        }
    }

    private static String row(String what, double ms, double base) {
        return String.format(Locale.ROOT, "  %-44s %8.1f ms  %6.1fx baseline", what, ms, ms / base);
    }

    private static double bare(String connect, String cluster) throws Exception {
        long t0 = System.nanoTime();
        try (CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .namespace("pidpool/" + cluster)
                .sessionTimeoutMs(4000)
                .retryPolicy(new RetryOneTime(100))
                .build()) {
            c.start();
            c.blockUntilConnected(10, TimeUnit.SECONDS);
            c.create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath("/bench/node-" + System.nanoTime());
            return (System.nanoTime() - t0) / 1e6;
        }
    }

    private static double start(SdkHarness harness, String redis) {
        PidClient.Builder builder = harness.builder(new RecordingListener()).closeOnJvmExit(false);
        if (redis != null) {
            builder.redisAddress(redis);
        }
        try (PidClient client = builder.build()) {
            long t0 = System.nanoTime();
            client.start();
            double ms = (System.nanoTime() - t0) / 1e6;
            assertThat(client.state()).isEqualTo(PidClient.State.REGISTERED);
            return ms;
        }
    }

    private static double coldStart(String connect, String cluster, String redis)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("start-bench", ".out");
        try {
            Process p = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            AbandonedClientMain.class.getName(),
                            connect,
                            cluster,
                            redis,
                            "false",
                            "start-only")
                    .redirectOutput(out.toFile())
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            Matcher m = START.matcher(Files.readString(out, StandardCharsets.UTF_8));
            assertThat(m.find()).as("START line").isTrue();
            return Double.parseDouble(m.group(2));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
