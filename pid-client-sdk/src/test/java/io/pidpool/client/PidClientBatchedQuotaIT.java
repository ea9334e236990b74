package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.FakePlatform;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The public batched quota mode ({@link PidClient.Builder#batchedPermits}) and {@link
 * PidClient#tryAcquireAsync}, end to end like {@link PidClientQuotaIT}: real ZooKeeper ({@link
 * FakeLeader} assigns the PIDs) and real Redis (limits set with {@link RedissonQuotaLedger#setLimit}).
 */
class PidClientBatchedQuotaIT {
    private static final int THREADS = 4;
    /** Upper bound of acquire calls per thread and phase: every loop ends. */
    private static final int MAX_CALLS = 20_000;
    /** Async acquires each thread keeps in flight. */
    private static final int IN_FLIGHT = 16;

    private static TestingServer zookeeper;
    private static String redisUrl;

    private SdkHarness harness;
    private FakeLeader leader;
    private RedissonClient leaderRedis;
    private RedissonQuotaLedger leaderLedger;
    private final FakePlatform platform = new FakePlatform();
    private final List<RecordingListener> listeners = new ArrayList<>();
    private ExecutorService pool;

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
        // what the real leader will do: the cluster's ledger, default shard count, as the SDK uses it
        leaderLedger = RedissonQuotaLedger.builder()
                .redisson(leaderRedis)
                .cluster(harness.cluster())
                .clientId("leader")
                .build();
        pool = Executors.newFixedThreadPool(2 * THREADS + 1);
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        harness.close();
        try {
            leaderLedger.close();
            RedisSupport.drop(leaderRedis, leaderLedger.keys());
        } finally {
            leaderRedis.shutdown();
        }
        listeners.forEach(l -> assertThat(l.violations()).isEmpty());
        assertThat(platform.violations()).isEmpty();
    }

    private RecordingListener listener(String name) {
        RecordingListener l = new RecordingListener(name, platform);
        listeners.add(l);
        return l;
    }

    /** A started, handshaken client with the quota ledger on the shared Redis. */
    private PidClient client(RecordingListener listener, String connectString, boolean batched) {
        return harness.start(harness.builder(listener)
                .connectString(connectString)
                .redisAddress(redisUrl)
                .batchedPermits(batched));
    }

    /** Sets the limits (as the leader will), assigns the PIDs and waits until the client holds them. */
    private FakeLeader.Instance assign(PidClient client, Map<String, Long> limits) {
        FakeLeader.Instance instance = harness.handshake(client);
        limits.forEach(leaderLedger::setLimit);
        harness.addAndAwait(instance, limits.keySet().toArray(String[]::new));
        await().atMost(WAIT).until(() -> client.heldPids().equals(limits.keySet()));
        return instance;
    }

    private static QuotaMonth thisMonth() {
        return new MonthlyWindow(ZoneOffset.UTC).monthOf(Instant.now());
    }

    private long used(String pid) {
        return leaderLedger.usage(pid, thisMonth()).used();
    }

    /**
     * {@code THREADS} threads call the blocking {@code tryAcquire(1..3)} until a {@code tryAcquire(1)}
     * comes back empty (or {@link #MAX_CALLS}); returns every permit granted.
     */
    private List<Permit> drainBlocking(PidClient client) throws Exception {
        ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();
        List<Future<?>> runs = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            runs.add(pool.submit(() -> {
                for (int i = 0; i < MAX_CALLS; i++) {
                    int n = 1 + ThreadLocalRandom.current().nextInt(3);
                    Optional<Permit> p = client.tryAcquire(n);
                    if (p.isPresent()) {
                        assertThat(p.get().commands()).isEqualTo(n);
                        permits.add(p.get());
                    } else if (client.tryAcquire(1).map(permits::add).isEmpty()) {
                        return null;
                    }
                }
                throw new AssertionError("still granting after " + MAX_CALLS + " calls");
            }));
        }
        for (Future<?> run : runs) {
            run.get(60, TimeUnit.SECONDS);
        }
        return new ArrayList<>(permits);
    }

    /**
     * {@code THREADS} threads each keep {@link #IN_FLIGHT} {@code tryAcquireAsync(1..3)} in flight,
     * round after round, until a whole round plus a final {@code tryAcquireAsync(1)} grants nothing
     * (or {@link #MAX_CALLS} rounds); returns every permit granted.
     */
    private List<Permit> drainAsync(PidClient client) throws Exception {
        ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();
        List<Future<?>> runs = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            runs.add(pool.submit(() -> {
                for (int round = 0; round < MAX_CALLS; round++) {
                    List<Integer> asked = new ArrayList<>();
                    List<CompletableFuture<Optional<Permit>>> futures = new ArrayList<>();
                    for (int k = 0; k < IN_FLIGHT; k++) {
                        int n = 1 + ThreadLocalRandom.current().nextInt(3);
                        asked.add(n);
                        futures.add(client.tryAcquireAsync(n));
                    }
                    int granted = 0;
                    for (int k = 0; k < futures.size(); k++) {
                        Optional<Permit> p = futures.get(k).get(30, TimeUnit.SECONDS);
                        if (p.isPresent()) {
                            assertThat(p.get().commands()).isEqualTo(asked.get(k));
                            permits.add(p.get());
                            granted++;
                        }
                    }
                    if (granted == 0
                            && client.tryAcquireAsync(1)
                                    .get(30, TimeUnit.SECONDS)
                                    .map(permits::add)
                                    .isEmpty()) {
                        return null;
                    }
                }
                throw new AssertionError("still granting after " + MAX_CALLS + " rounds");
            }));
        }
        for (Future<?> run : runs) {
            run.get(60, TimeUnit.SECONDS);
        }
        return new ArrayList<>(permits);
    }

    private static Map<String, Long> commandsByPid(List<Permit> permits) {
        return permits.stream().collect(Collectors.groupingBy(Permit::pid, Collectors.summingLong(Permit::commands)));
    }

    private void assertExactly(PidClient client, Map<String, Long> limits, List<Permit> permits) {
        assertThat(commandsByPid(permits)).isEqualTo(limits);
        assertThat(permits).extracting(Permit::deductionId).doesNotHaveDuplicates();
        assertThat(permits)
                .allSatisfy(p -> assertThat(p.month()).isEqualTo(thisMonth().value()));
        limits.forEach((pid, limit) -> assertThat(used(pid)).isEqualTo(limit));
        assertThat(client.tryAcquire(1)).isEmpty();
    }

    @Test
    void batchedModeFourThreadsGetExactlyTheQuotaAndThenNothing() throws Exception {
        PidClient client = client(listener("A"), harness.connectString(), true);
        Map<String, Long> limits = Map.of("p1", 161L, "p2", 140L, "p3", 17L);
        assign(client, limits);

        List<Permit> permits = drainBlocking(client);

        assertExactly(client, limits, permits);
    }

    @Test
    void asyncInBatchedModeFourThreadsGetExactlyTheQuotaAndThenNothing() throws Exception {
        PidClient client = client(listener("A"), harness.connectString(), true);
        Map<String, Long> limits = Map.of("p1", 211L, "p2", 97L, "p3", 23L);
        assign(client, limits);

        List<Permit> permits = drainAsync(client);

        assertExactly(client, limits, permits);
        assertThat(client.tryAcquireAsync(1).get(30, TimeUnit.SECONDS)).isEmpty();
    }

    @Test
    void asyncInDirectModeFourThreadsGetExactlyTheQuotaAndThenNothing() throws Exception {
        PidClient client = client(listener("A"), harness.connectString(), false);
        Map<String, Long> limits = Map.of("p1", 61L, "p2", 40L, "p3", 17L);
        assign(client, limits);

        CompletableFuture<Optional<Permit>> first = client.tryAcquireAsync(2);
        assertThat(first).isDone(); // direct mode: the deduction ran on the calling thread
        List<Permit> permits = new ArrayList<>(drainAsync(client));
        permits.add(first.get().orElseThrow());

        assertExactly(client, limits, permits);
    }

    @Test
    void asyncGrantsNothingWhileTheLeaseIsNotValid() throws Exception {
        BlackHoleProxy proxy = harness.proxy();
        PidClient client = client(listener("A"), proxy.connectString(), true);
        assign(client, Map.of("p1", 1000L));
        assertThat(client.tryAcquireAsync(2).get(30, TimeUnit.SECONDS)).isPresent();

        proxy.blackHole();
        await().atMost(WAIT).until(() -> client.state() == PidClient.State.SUSPENDED);
        long usedWhileCut = used("p1");
        List<CompletableFuture<Optional<Permit>>> whileCut = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            whileCut.add(client.tryAcquireAsync(1));
        }
        for (CompletableFuture<Optional<Permit>> f : whileCut) {
            assertThat(f.get(30, TimeUnit.SECONDS)).isEmpty();
        }
        assertThat(used("p1")).isEqualTo(usedWhileCut); // nothing was even sent

        proxy.restore();
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));
        Permit after = client.tryAcquireAsync(1).get(30, TimeUnit.SECONDS).orElseThrow();
        assertThat(after.pid()).isEqualTo("p1");
        assertThat(used("p1")).isEqualTo(usedWhileCut + 1);
    }

    @Test
    void asyncRejectsBadArgumentsAndAClosedClientAtOnce() {
        PidClient client = client(listener("A"), harness.connectString(), true);
        assertThatThrownBy(() -> client.tryAcquireAsync(0))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        client.close();
        assertThatThrownBy(() -> client.tryAcquireAsync(1))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }
}
