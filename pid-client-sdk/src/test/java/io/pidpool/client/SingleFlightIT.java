package io.pidpool.client;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.DefaultSingleFlight;
import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.client.testing.ZooKeeperSessions;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.singleflight.FlightFailedException;
import io.pidpool.core.singleflight.FlightKeys;
import io.pidpool.core.singleflight.FlightRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

/** The single-flight on a real ZooKeeper: several participants (one session each), faults on the holder. */
class SingleFlightIT {
    private static final Duration RETENTION = Duration.ofMinutes(5);
    private static final Duration SESSION = Duration.ofSeconds(1);
    private static TestingServer zookeeper;

    private final List<AutoCloseable> closing = new ArrayList<>();
    private final AtomicInteger runs = new AtomicInteger();
    private CuratorFramework observer;
    private String key;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = TestZooKeeper.start();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @org.junit.jupiter.api.BeforeEach
    void setUp(TestInfo test) {
        key = "it:" + test.getTestMethod().orElseThrow().getName();
        observer = CuratorFrameworkFactory.builder()
                .connectString(zookeeper.getConnectString())
                .namespace("pidpool/default")
                .retryPolicy(new RetryOneTime(100))
                .build();
        observer.start();
        closing.add(observer);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
    }

    private DefaultSingleFlight participant(String connectString) {
        DefaultSingleFlight f = (DefaultSingleFlight) SingleFlight.builder()
                .connectString(connectString)
                .sessionTimeout(SESSION)
                .maxWait(Duration.ofSeconds(30))
                .build();
        closing.add(f);
        return f;
    }

    private Callable<byte[]> work(String value, CountDownLatch gate) {
        return () -> {
            runs.incrementAndGet();
            gate.await(30, TimeUnit.SECONDS);
            return value.getBytes(UTF_8);
        };
    }

    private static String text(CompletableFuture<byte[]> f) throws Exception {
        return new String(f.get(30, TimeUnit.SECONDS), UTF_8);
    }

    private String stored() throws Exception {
        FlightRecord r = FlightRecord.decode(observer.getData().forPath(FlightKeys.resultPath(key)));
        assertThat(r.kind()).isEqualTo(FlightRecord.Kind.SUCCESS);
        return new String(r.value(), UTF_8);
    }

    private void awaitLockHeld() {
        await().atMost(Duration.ofSeconds(10))
                .until(() -> observer.checkExists().forPath(FlightKeys.lockPath(key)) != null);
    }

    @Test
    void concurrentRequestsAcrossClientsRunTheWorkOnceAndAllGetItsResult() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        List<CompletableFuture<byte[]>> futures = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            DefaultSingleFlight p = participant(zookeeper.getConnectString());
            for (int i = 0; i < 5; i++) {
                futures.add(p.submit(key, RETENTION, work("from-" + c + "-" + i, gate)));
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        gate.countDown();
        String first = text(futures.get(0));
        for (var f : futures) {
            assertThat(text(f)).isEqualTo(first);
        }
        assertThat(runs).hasValue(1);
        assertThat(stored()).isEqualTo(first);
        assertThat(observer.checkExists().forPath(FlightKeys.lockPath(key))).isNull();
    }

    @Test
    void aWaiterTakesOverFromAnExpiredHolderWhoseLateResultIsRefused() throws Exception {
        DefaultSingleFlight a = participant(zookeeper.getConnectString());
        DefaultSingleFlight b = participant(zookeeper.getConnectString());
        CountDownLatch holdA = new CountDownLatch(1);
        var fa = a.submit(key, RETENTION, work("from-a", holdA));
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        awaitLockHeld();
        var fb = b.submit(key, RETENTION, work("from-b", new CountDownLatch(0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.waiting() == 1);

        ZooKeeperSessions.expire(
                zookeeper.getConnectString(), a.curator().getZookeeperClient().getZooKeeper());

        assertThat(text(fb)).isEqualTo("from-b");
        assertThat(runs).hasValue(2);
        holdA.countDown(); // a finishes late: its result must be refused
        assertThat(text(fa)).isEqualTo("from-b");
        assertThat(stored()).isEqualTo("from-b");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aWaiterTakesOverFromAPartitionedHolder() throws Exception {
        BlackHoleProxy proxy = BlackHoleProxy.to(zookeeper.getPort());
        closing.add(proxy);
        DefaultSingleFlight a = participant(proxy.connectString());
        DefaultSingleFlight b = participant(zookeeper.getConnectString());
        CountDownLatch holdA = new CountDownLatch(1);
        var fa = a.submit(key, RETENTION, work("from-a", holdA));
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        awaitLockHeld();
        var fb = b.submit(key, RETENTION, work("from-b", new CountDownLatch(0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.waiting() == 1);

        proxy.blackHole(); // a's session expires on the server after the session timeout

        assertThat(text(fb)).isEqualTo("from-b");
        assertThat(runs).hasValue(2);
        proxy.restore();
        holdA.countDown();
        try {
            assertThat(text(fa)).isEqualTo("from-b");
        } catch (java.util.concurrent.ExecutionException e) {
            // a may also find ZooKeeper unreachable while it reconnects; never its own result
            assertThat(e.getCause()).isInstanceOf(PidPoolException.class);
        }
        assertThat(stored()).isEqualTo("from-b");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aHolderWhoseLockWasDeletedUnderItsLiveSessionIsFencedByTheResultVersion() throws Exception {
        DefaultSingleFlight a = participant(zookeeper.getConnectString());
        DefaultSingleFlight b = participant(zookeeper.getConnectString());
        CountDownLatch holdA = new CountDownLatch(1);
        CountDownLatch holdB = new CountDownLatch(1);
        var fa = a.submit(key, RETENTION, work("from-a", holdA));
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        awaitLockHeld();
        var fb = b.submit(key, RETENTION, work("from-b", holdB));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.waiting() == 1);

        observer.delete().forPath(FlightKeys.lockPath(key)); // by hand: a's session lives on
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 2); // b holds the lock now
        holdA.countDown(); // a publishes while b holds the lock: refused by the claimed version
        holdB.countDown();

        assertThat(text(fb)).isEqualTo("from-b");
        assertThat(text(fa)).isEqualTo("from-b");
        assertThat(stored()).isEqualTo("from-b");
    }

    @Test
    void aFailedWorkFailsTheWaitersOfItsRoundAndTheNextCallRunsAgain() throws Exception {
        DefaultSingleFlight a = participant(zookeeper.getConnectString());
        DefaultSingleFlight b = participant(zookeeper.getConnectString());
        CountDownLatch holdA = new CountDownLatch(1);
        var fa = a.submit(key, RETENTION, () -> {
            runs.incrementAndGet();
            holdA.await(30, TimeUnit.SECONDS);
            throw new java.io.IOException("upstream down");
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
        awaitLockHeld();
        var fb = b.submit(key, RETENTION, work("unused", new CountDownLatch(0)));
        await().atMost(Duration.ofSeconds(10)).until(() -> b.waiting() == 1);
        holdA.countDown();

        for (var f : List.of(fa, fb)) {
            assertThatThrownBy(() -> f.get(30, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(FlightFailedException.class)
                    .hasMessageContaining("java.io.IOException: upstream down");
        }
        assertThat(b.run(key, RETENTION, SingleFlight.Codec.utf8(), () -> "recovered"))
                .isEqualTo("recovered");
    }

    @Test
    void expiredResultsArePurgedAndTooLargeResultsRefused() throws Exception {
        DefaultSingleFlight a = participant(zookeeper.getConnectString());
        assertThat(a.run(key, Duration.ofMillis(1), SingleFlight.Codec.utf8(), () -> "short-lived"))
                .isEqualTo("short-lived");
        await().atMost(Duration.ofSeconds(5)).until(() -> a.purgeExpired() == 1 || !resultExists());
        assertThat(resultExists()).isFalse();

        assertThatThrownBy(() -> a.run(
                        key, RETENTION, SingleFlight.Codec.bytes(), () -> new byte[SingleFlight.MAX_RESULT_BYTES + 1]))
                .isInstanceOf(FlightFailedException.class)
                .hasMessageContaining("limit");
        assertThatThrownBy(() -> a.submit("bad/key", RETENTION, () -> new byte[0]))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("key");
    }

    private boolean resultExists() throws Exception {
        return observer.checkExists().forPath(FlightKeys.resultPath(key)) != null;
    }
}
