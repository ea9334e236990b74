package io.pidpool.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.model.PidState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A JVM whose {@code main} returns without {@code close()} ({@link AbandonedClientMain}, its own
 * process) still exits, and its PIDs are given back at once: the shutdown hook closes the client
 * (onRevoked, DELETED, instance node deleted) before the JVM is gone. With Redis (Redisson's threads
 * are not daemon threads) the exit watch closes the client first. Without the hook the JVM exits too,
 * but its instance node stays until ZooKeeper expires the session.
 */
class PidClientJvmExitIT {
    private static final Duration EXIT_WITHIN = Duration.ofSeconds(20);

    private static TestingServer zookeeper;
    private SdkHarness harness;
    private FakeLeader leader;
    private Process process;
    private Path out;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @BeforeEach
    void setUp() throws IOException {
        harness = new SdkHarness(zookeeper.getConnectString());
        leader = harness.leader();
        out = Files.createTempFile("abandoned-client", ".out");
    }

    @AfterEach
    void tearDown() throws IOException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
        }
        harness.close();
        Files.deleteIfExists(out);
    }

    @Test
    void aZooKeeperOnlyClientIsClosedByTheHookAndThePidIsFreeAtOnce() throws Exception {
        FakeLeader.Instance instance = startAndAssign("-", true);

        long exitMs = awaitExit();
        assertThat(output()).contains("REVOKED p1");
        // given back by close(), not by a session expiry (that takes T = 4 s after the exit)
        assertThat(leader.exists(instance.path()))
                .as("instance node right after the exit")
                .isFalse();
        assertThat(leader.state(instance, "p1")).contains(PidState.DELETED);
        System.out.printf("zookeeper only: JVM exited %d ms after main returned%n", exitMs);
    }

    @Test
    void aClientWithRedisDoesNotKeepTheJvmAliveAndGivesThePidBack() throws Exception {
        FakeLeader.Instance instance = startAndAssign(RedisSupport.sharedUrl(), true);

        long exitMs = awaitExit();
        assertThat(output()).contains("REVOKED p1");
        assertThat(leader.exists(instance.path()))
                .as("instance node right after the exit")
                .isFalse();
        assertThat(leader.state(instance, "p1")).contains(PidState.DELETED);
        System.out.printf("with Redis: JVM exited %d ms after main returned%n", exitMs);
    }

    @Test
    void withoutTheHookTheJvmExitsButItsNodeStaysUntilTheSessionExpires() throws Exception {
        FakeLeader.Instance instance = startAndAssign("-", false);

        awaitExit();
        assertThat(output()).doesNotContain("REVOKED");
        assertThat(leader.exists(instance.path()))
                .as("instance node right after the exit")
                .isTrue();
        await().atMost(Duration.ofSeconds(15)).until(() -> !leader.exists(instance.path())); // T = 4 s
    }

    private FakeLeader.Instance startAndAssign(String redis, boolean hook) throws Exception {
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx96m",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                System.getProperty("java.class.path"),
                AbandonedClientMain.class.getName(),
                zookeeper.getConnectString(),
                harness.cluster(),
                redis,
                Boolean.toString(hook));
        process = new ProcessBuilder(command)
                .redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        await().atMost(Duration.ofSeconds(30)).until(() -> output().contains("REGISTERED "));
        String id = output().lines()
                .filter(l -> l.startsWith("REGISTERED "))
                .findFirst()
                .orElseThrow()
                .substring("REGISTERED ".length());
        FakeLeader.Instance instance =
                leader.handshake(leader.instance(SdkHarness.MODULE, id).orElseThrow());
        leader.add(instance, "p1", FakeLeader.account("pw-p1", 100));
        await().atMost(Duration.ofSeconds(15)).until(() -> output().lines().anyMatch(l -> l.equals("HELD")));
        assertThat(output()).contains("ASSIGNED p1");
        return instance;
    }

    /** Milliseconds from "HELD" (main returns) to the process's end; fails after {@link #EXIT_WITHIN}. */
    private long awaitExit() throws InterruptedException {
        long start = System.nanoTime();
        boolean exited = process.waitFor(EXIT_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(exited)
                .as("the JVM exits after main returned without close()\n%s", output())
                .isTrue();
        assertThat(process.exitValue()).isZero();
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    private String output() {
        try {
            return Files.readString(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
