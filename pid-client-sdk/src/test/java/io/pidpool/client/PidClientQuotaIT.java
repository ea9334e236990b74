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
import io.pidpool.core.model.PidState;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.testing.ManualTicker;
import java.io.IOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * {@link PidClient#tryAcquire} and {@link PidClient#refund} end to end: a client built with {@code
 * redisAddress} on real ZooKeeper ({@link FakeLeader} assigns the PIDs) and real Redis (the leader's
 * part, the PIDs' limits, is set with {@link RedissonQuotaLedger#setLimit} here).
 */
class PidClientQuotaIT {
    private static final int THREADS = 4;
    /** Upper bound of acquire calls per thread and phase: every loop ends. */
    private static final int MAX_CALLS = 20_000;

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
    private PidClient client(RecordingListener listener, String connectString) {
        return harness.start(
                harness.builder(listener).connectString(connectString).redisAddress(redisUrl));
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
     * {@code THREADS} threads call {@code tryAcquire(1..3)} until a {@code tryAcquire(1)} comes back
     * empty (or {@link #MAX_CALLS}); returns every permit granted.
     */
    private List<Permit> drain(PidClient client) throws Exception {
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

    private static Map<String, Long> commandsByPid(List<Permit> permits) {
        return permits.stream().collect(Collectors.groupingBy(Permit::pid, Collectors.summingLong(Permit::commands)));
    }

    @Test
    void aClientOnRedisDatabaseFiveUsesTheLimitsTheServerWroteThere() throws Exception {
        // the server runs with redis.database: 5 and provisions the limits there
        RedissonClient db5 =
                RedisSupport.client(redisUrl, c -> c.useSingleServer().setDatabase(5));
        RedissonQuotaLedger serverLedger = RedissonQuotaLedger.builder()
                .redisson(db5)
                .cluster(harness.cluster())
                .clientId("leader-db5")
                .build();
        try {
            PidClient client = harness.start(harness.builder(listener("A"))
                    .connectString(harness.connectString())
                    .redisAddress(redisUrl)
                    .redisDatabase(5));
            FakeLeader.Instance instance = harness.handshake(client);
            serverLedger.setLimit("p1", 100);
            harness.addAndAwait(instance, "p1");
            await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));

            assertThat(client.tryAcquire(3))
                    .hasValueSatisfying(p -> assertThat(p.pid()).isEqualTo("p1"));
            assertThat(serverLedger.usage("p1", thisMonth()).used()).isEqualTo(3);
            assertThat(used("p1")).isZero(); // database 0 untouched
            assertThat(client.pidsWithoutLimit()).isZero();
        } finally {
            serverLedger.close();
            RedisSupport.drop(db5, serverLedger.keys());
            db5.shutdown();
        }
    }

    @Test
    void aHeldPidWithoutALimitInRedisIsReportedOncePerPid() throws Exception {
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger)
                org.slf4j.LoggerFactory.getLogger(io.pidpool.client.internal.quota.MissingLimits.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs =
                new ch.qos.logback.core.read.ListAppender<>();
        logs.start();
        logger.addAppender(logs);
        try {
            PidClient client = client(listener("A"), harness.connectString());
            FakeLeader.Instance instance = harness.handshake(client);
            leaderLedger.setLimit("p2", 100);
            harness.addAndAwait(instance, "p1", "p2"); // p1 has no limit in this Redis
            await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2")));

            for (int i = 0; i < 20; i++) {
                client.tryAcquire(100); // only an empty p2 or the limitless p1 could answer
            }

            await().atMost(WAIT).until(() -> client.pidsWithoutLimit() == 1);
            for (int i = 0; i < 20; i++) {
                client.tryAcquire(1);
            }
            assertThat(client.pidsWithoutLimit()).isEqualTo(1);
            assertThat(logs.list)
                    .filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.ERROR)
                    .singleElement()
                    .satisfies(e -> assertThat(e.getFormattedMessage()).contains("p1"));
        } finally {
            logger.detachAppender(logs);
        }
    }

    @Test
    void fourThreadsGetExactlyTheQuotaAndThenNothing() throws Exception {
        PidClient client = client(listener("A"), harness.connectString());
        Map<String, Long> limits = Map.of("p1", 61L, "p2", 40L, "p3", 17L);
        assign(client, limits);

        List<Permit> permits = drain(client);

        assertThat(commandsByPid(permits)).isEqualTo(limits);
        assertThat(permits).extracting(Permit::deductionId).doesNotHaveDuplicates();
        assertThat(permits)
                .allSatisfy(p -> assertThat(p.month()).isEqualTo(thisMonth().value()));
        limits.forEach((pid, limit) -> assertThat(used(pid)).isEqualTo(limit));
        assertThat(client.tryAcquire(1)).isEmpty();
        assertThat(client.tryAcquire(3)).isEmpty();
    }

    @Test
    void twoClientsWithDisjointPidsEachUseOnlyTheirOwn() throws Exception {
        PidClient a = client(listener("A"), harness.connectString());
        PidClient b = client(listener("B"), harness.connectString());
        Map<String, Long> limitsA = Map.of("a1", 30L, "a2", 25L);
        Map<String, Long> limitsB = Map.of("b1", 33L, "b2", 12L);
        assign(a, limitsA);
        assign(b, limitsB);

        Future<List<Permit>> fromA = pool.submit(() -> drain(a)); // both clients at once
        List<Permit> fromB = drain(b);

        assertThat(commandsByPid(fromA.get(60, TimeUnit.SECONDS))).isEqualTo(limitsA);
        assertThat(commandsByPid(fromB)).isEqualTo(limitsB);
        assertThat(a.tryAcquire(1)).isEmpty();
        assertThat(b.tryAcquire(1)).isEmpty();
    }

    @Test
    void aRevokedPidIsNeverPermittedOnceItsRevocationStarted() throws Exception {
        RecordingListener listener = listener("A");
        AtomicLong revokeStarted = new AtomicLong(Long.MAX_VALUE);
        listener.beforeRevoke(account -> {
            if (account.id().equals("p1")) {
                revokeStarted.compareAndSet(Long.MAX_VALUE, System.nanoTime());
            }
        });
        PidClient client = client(listener, harness.connectString());
        FakeLeader.Instance instance = assign(client, Map.of("p1", 1_000_000L, "p2", 1_000_000L));

        record Grant(long startedAt, Permit permit) {}
        ConcurrentLinkedQueue<Grant> grants = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        List<Future<?>> runs = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            runs.add(pool.submit(() -> {
                for (int i = 0; i < MAX_CALLS && running.get(); i++) {
                    long startedAt = System.nanoTime();
                    client.tryAcquire(1).ifPresent(p -> grants.add(new Grant(startedAt, p)));
                }
                return null;
            }));
        }
        await().atMost(WAIT)
                .until(() -> grants.stream().anyMatch(g -> g.permit().pid().equals("p1")));
        leader.delete(instance, "p1");
        harness.awaitState(instance, "p1", PidState.DELETED); // acked after onRevoked returned
        int before = grants.size();
        await().atMost(WAIT).until(() -> grants.size() > before + 200); // keep going on p2 a while
        running.set(false);
        for (Future<?> run : runs) {
            run.get(60, TimeUnit.SECONDS);
        }

        long cut = revokeStarted.get();
        assertThat(cut).isLessThan(Long.MAX_VALUE);
        assertThat(grants).filteredOn(g -> g.permit().pid().equals("p1")).allSatisfy(g -> assertThat(g.startedAt())
                .isLessThan(cut));
        assertThat(grants).filteredOn(g -> g.startedAt() > cut).isNotEmpty().allSatisfy(g -> assertThat(
                        g.permit().pid())
                .isEqualTo("p2"));
        assertThat(client.heldPids()).containsExactly("p2");
        // nothing was deducted from p1 without a permit (a deduction that raced the revocation was voided)
        List<Permit> all = grants.stream().map(Grant::permit).toList();
        assertThat(used("p1")).isEqualTo(commandsByPid(all).get("p1"));
        assertThat(used("p2")).isEqualTo(commandsByPid(all).get("p2"));
    }

    @Test
    void aSuspendedClientGrantsNothingUntilItsLeaseIsValidAgain() {
        BlackHoleProxy proxy = harness.proxy();
        PidClient client = client(listener("A"), proxy.connectString());
        assign(client, Map.of("p1", 1000L));
        assertThat(client.tryAcquire(2)).isPresent();

        proxy.blackHole();
        await().atMost(WAIT).until(() -> client.state() == PidClient.State.SUSPENDED);
        long usedWhileCut = used("p1");
        for (int i = 0; i < 100; i++) {
            assertThat(client.tryAcquire(1)).isEmpty();
        }
        assertThat(used("p1")).isEqualTo(usedWhileCut); // Redis was reachable: nothing was even sent

        proxy.restore();
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));
        Permit after = client.tryAcquire(1).orElseThrow();
        assertThat(after.pid()).isEqualTo("p1");
        assertThat(used("p1")).isEqualTo(usedWhileCut + 1);
    }

    @Test
    void afterALongPauseNoPermitIsGrantedUntilTheLeaseIsValidAgain() {
        ManualTicker ticker = new ManualTicker();
        RecordingListener listener = listener("A");
        PidClient client =
                harness.start(harness.builder(listener).ticker(ticker::read).redisAddress(redisUrl));
        assign(client, Map.of("p1", 1000L));
        assertThat(client.tryAcquire(1)).isPresent();
        long usedBefore = used("p1");

        // "stopped" for 3/4 T: beyond the lease (2T/3 - margin); the state thread has not revoked yet
        ticker.advance(client.registration()
                .orElseThrow()
                .sessionTimeout()
                .multipliedBy(3)
                .dividedBy(4));
        assertThat(client.tryAcquire(1)).isEmpty(); // the lease check refuses on the spot
        assertThat(used("p1")).isEqualTo(usedBefore);

        await().atMost(WAIT).until(() -> listener.count(RecordingListener.Kind.REVOKED) == 1);
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1"))); // fresh reply, assigned again
        assertThat(client.tryAcquire(1)).isPresent();
        assertThat(listener.kinds("p1"))
                .containsExactly(
                        RecordingListener.Kind.ASSIGNED,
                        RecordingListener.Kind.REVOKED,
                        RecordingListener.Kind.ASSIGNED);
    }

    @Test
    void refundsThroughTheClientAreIdempotentAndNeverExceedTheDeduction() {
        PidClient a = client(listener("A"), harness.connectString());
        PidClient b = client(listener("B"), harness.connectString());
        assign(a, Map.of("p1", 10L));
        harness.handshake(b);
        Permit p = a.tryAcquire(3).orElseThrow();
        assertThat(used("p1")).isEqualTo(3);

        a.refund(p.deductionId(), "r1", 2);
        assertThat(used("p1")).isEqualTo(1);
        a.refund(p.deductionId(), "r1", 2); // the same refund again: nothing changes, no error
        b.refund(p.deductionId(), "r1", 2); // by id alone, from another client too
        assertThat(used("p1")).isEqualTo(1);

        assertThatThrownBy(() -> a.refund(p.deductionId(), "r2", 2))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE);
                    assertThat(e.field()).isEqualTo("amount");
                });
        assertThatThrownBy(() -> a.refund(p.deductionId(), "r1", 1))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        b.refund(p.deductionId(), "r3", 1);
        assertThat(used("p1")).isEqualTo(0);

        String unknown = p.deductionId().substring(0, p.deductionId().lastIndexOf('-') + 1) + "12345";
        assertThatThrownBy(() -> a.refund(unknown, "r4", 1))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThatThrownBy(() -> a.tryAcquire(0))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));

        a.close();
        assertThatThrownBy(() -> a.tryAcquire(1))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }
}
