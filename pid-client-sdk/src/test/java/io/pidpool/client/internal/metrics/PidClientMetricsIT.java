package io.pidpool.client.internal.metrics;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.PidState;
import java.io.IOException;
import java.util.Set;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The SDK's meters ({@link PidClientMetrics}) in a {@link SimpleMeterRegistry}, driven by a real
 * client on real ZooKeeper ({@link FakeLeader}) and real Redis: held PIDs, lease margin, callback
 * timers, revocations by cause, permits granted/denied and refund outcomes, and their removal on
 * close.
 */
class PidClientMetricsIT {
    private static final String MODULE = SdkHarness.MODULE.toString();
    private static TestingServer zookeeper;
    private static String redisUrl;

    private SdkHarness harness;
    private FakeLeader leader;
    private RedissonClient leaderRedis;
    private RedissonQuotaLedger leaderLedger;
    private final MeterRegistry registry = new SimpleMeterRegistry();

    @BeforeAll
    static void start() {
        zookeeper = TestZooKeeper.start();
        redisUrl = RedisSupport.sharedUrl();
    }

    @AfterAll
    static void stop() throws IOException {
        zookeeper.close();
    }

    @BeforeEach
    void setUp() {
        harness = new SdkHarness(zookeeper.getConnectString());
        leader = harness.leader();
        leaderRedis = RedisSupport.client(redisUrl);
        leaderLedger = RedissonQuotaLedger.builder()
                .redisson(leaderRedis)
                .cluster(harness.cluster())
                .clientId("leader")
                .build();
    }

    @AfterEach
    void tearDown() {
        harness.close();
        try {
            leaderLedger.close();
            RedisSupport.drop(leaderRedis, leaderLedger.keys());
        } finally {
            leaderRedis.shutdown();
        }
    }

    @Test
    void theClientsMetersFollowWhatItDoes() {
        RecordingListener listener = new RecordingListener().failOn("p3");
        PidClient client =
                harness.start(harness.builder(listener).redisAddress(redisUrl).meterRegistry(registry));
        FakeLeader.Instance instance = harness.handshake(client);
        leaderLedger.setLimit("p1", 5);
        leaderLedger.setLimit("p2", 5);
        harness.addAndAwait(instance, "p1", "p2");
        leader.add(instance, "p3", FakeLeader.account("pw-p3", 100)); // onAssigned throws
        await().atMost(WAIT)
                .until(() -> leader.read(instance, "p3").map(n -> n.hasError()).orElse(false));
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2")));

        assertThat(gauge("pidpool.client.held.pids")).isEqualTo(2.0);
        assertThat(gauge("pidpool.client.lease.margin")).isGreaterThan(0.0).isLessThanOrEqualTo(4.0 * 2 / 3);
        assertThat(timer("onAssigned", "ok").count()).isEqualTo(2);
        assertThat(timer("onAssigned", "failed").count()).isEqualTo(1);

        // permits: two granted, one denied (nobody has that much left)
        Permit permit = client.tryAcquire(3).orElseThrow();
        assertThat(client.tryAcquire(4)).isPresent();
        assertThat(client.tryAcquire(5)).isEmpty();
        assertThat(count("pidpool.client.permits", "result", "granted")).isEqualTo(2);
        assertThat(count("pidpool.client.permits", "result", "denied")).isEqualTo(1);
        assertThat(count("pidpool.client.permits", "result", "error")).isZero();

        // refunds: applied, repeated (same refund id), rejected (above the deduction)
        client.refund(permit.deductionId(), "r1", 1);
        client.refund(permit.deductionId(), "r1", 1);
        assertThatThrownBy(() -> client.refund(permit.deductionId(), "r2", 3)).isInstanceOf(PidPoolException.class);
        assertThat(count("pidpool.client.refunds", "outcome", "applied")).isEqualTo(1);
        assertThat(count("pidpool.client.refunds", "outcome", "repeated")).isEqualTo(1);
        assertThat(count("pidpool.client.refunds", "outcome", "rejected")).isEqualTo(1);

        // the leader withdraws p2: one revocation by the leader, timed as onRevoked
        leader.delete(instance, "p2");
        harness.awaitState(instance, "p2", PidState.DELETED);
        await().atMost(WAIT).until(() -> gauge("pidpool.client.held.pids") == 1.0);
        assertThat(count("pidpool.client.revocations", "cause", "leader")).isEqualTo(1);
        assertThat(timer("onRevoked", "ok").count()).isEqualTo(1);

        // close revokes p1 (cause close), and the client's meters leave the registry
        PidClientMetricsProbe probe = new PidClientMetricsProbe(registry);
        client.close();
        assertThat(probe.revocationsOnClose()).isEqualTo(1);
        assertThat(registry.find("pidpool.client.held.pids").gauges()).isEmpty();
        assertThat(registry.find("pidpool.client.permits").counters()).isEmpty();
    }

    private double gauge(String name) {
        return registry.get(name).tag("module", MODULE).gauge().value();
    }

    private double count(String name, String tag, String value) {
        return registry.get(name)
                .tag("module", MODULE)
                .tag(tag, value)
                .counter()
                .count();
    }

    private Timer timer(String callback, String outcome) {
        return registry.get("pidpool.client.callback.duration")
                .tag("callback", callback)
                .tag("outcome", outcome)
                .timer();
    }

    /** Counts close revocations as they happen: the counter leaves the registry with the client. */
    private static final class PidClientMetricsProbe {
        private final io.micrometer.core.instrument.Counter closeCounter;

        PidClientMetricsProbe(MeterRegistry registry) {
            closeCounter = registry.get("pidpool.client.revocations")
                    .tag("cause", "close")
                    .counter();
        }

        double revocationsOnClose() {
            return closeCounter.count();
        }
    }
}
