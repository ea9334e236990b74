package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.PlatformSdkIT;
import io.pidpool.client.testing.RecordingListener.Kind;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A ZooKeeper that answers late but steadily (a proxy delaying every byte) must not cost a healthy
 * client its PIDs; a silent one (black hole) must still revoke them in time. Real ZooKeeper.
 */
class PidClientSlowZooKeeperIT extends PlatformSdkIT {
    private static final Logger log = LoggerFactory.getLogger(PidClientSlowZooKeeperIT.class);

    /** T = 5 s: lease budget 2T/3 − T/10 = 2833 ms, heartbeat every T/6 = 833 ms. */
    private static final Duration T = Duration.ofSeconds(5);
    /**
     * 800 ms each way: every round trip takes ≥ 1.6 s = 0.32T. One heartbeat at a time renews the lease
     * every ≥ 2 × 1.6 s = 3.2 s > 2833 ms and lets it lapse; one every 833 ms renews it every 833 ms
     * with replies 1.6 s old, i.e. 2.43 s < 2833 ms at worst.
     */
    private static final Duration ONE_WAY = Duration.ofMillis(800);

    private static final Duration HOLD = Duration.ofSeconds(15);

    @Test
    void aSlowButSteadyZooKeeperKeepsThePidsAndASilentOneStillRevokesThemInTime() {
        BlackHoleProxy proxy = harness.proxy();
        PidClient client = harness.start(
                harness.builder(listener).connectString(proxy.connectString()).sessionTimeout(T));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1", "p2");
        Registration before = client.registration().orElseThrow();
        assertThat(before.sessionTimeout()).isEqualTo(T); // the test ZooKeeper grants what is asked

        proxy.delay(ONE_WAY);
        Duration roundTrip = measureRoundTrip(proxy);
        log.info(
                "slow ZooKeeper: a round trip through the proxy takes {} ms (T = {} ms)",
                roundTrip.toMillis(),
                T.toMillis());
        assertThat(roundTrip).isGreaterThanOrEqualTo(ONE_WAY.multipliedBy(2));

        await().during(HOLD)
                .atMost(HOLD.plus(Duration.ofSeconds(5)))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> client.heldPids().equals(Set.of("p1", "p2")) && listener.count(Kind.REVOKED) == 0);
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED);
        assertThat(listener.kinds("p2")).containsExactly(Kind.ASSIGNED);
        assertThat(client.state()).isEqualTo(PidClient.State.REGISTERED);
        assertThat(client.registration().orElseThrow().sessionId()).isEqualTo(before.sessionId());

        // now silence: replies already on their way are held back too. The newest answered request
        // was sent before the cut, so the lease (2T/3 − T/10 from its send time) ends before T.
        proxy.blackHole();
        long cut = System.nanoTime();
        await().atMost(T).until(() -> listener.held().isEmpty());
        Duration revokedAfter = Duration.ofNanos(System.nanoTime() - cut);
        log.info("slow, then silent ZooKeeper: both PIDs revoked {} ms after the cut", revokedAfter.toMillis());
        assertThat(client.heldPids()).isEmpty();
        assertThat(revokedAfter).isLessThan(T);

        proxy.restore();
        proxy.delay(Duration.ZERO);
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2")));
    }

    /** One {@code checkExists} through the proxy on a connection of its own (the delay applies to it too). */
    private static Duration measureRoundTrip(BlackHoleProxy proxy) {
        try (CuratorFramework probe = CuratorFrameworkFactory.builder()
                .connectString(proxy.connectString())
                .sessionTimeoutMs((int) T.toMillis())
                .connectionTimeoutMs((int) T.multipliedBy(2).toMillis())
                .retryPolicy(new RetryOneTime(100))
                .ensembleTracker(false)
                .build()) {
            probe.start();
            if (!probe.blockUntilConnected((int) T.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the probe could not connect through the proxy");
            }
            probe.checkExists().forPath("/"); // warm up
            long start = System.nanoTime();
            probe.checkExists().forPath("/");
            return Duration.ofNanos(System.nanoTime() - start);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (Exception e) {
            throw new AssertionError("probe through the proxy failed", e);
        }
    }
}
