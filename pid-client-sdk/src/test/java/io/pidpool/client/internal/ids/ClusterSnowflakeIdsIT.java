package io.pidpool.client.internal.ids;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.client.testing.ZooKeeperSessions;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.SnowflakeId;
import io.pidpool.core.protocol.ZkLayout;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snowflake ids through worker-id slots on a real ZooKeeper: hand-overs between holders of one slot
 * (graceful, forced expiry, a slower clock), loss and re-acquisition, and four clients passing five
 * slots around while generating flat out.
 */
class ClusterSnowflakeIdsIT {
    private static final Logger log = LoggerFactory.getLogger(ClusterSnowflakeIdsIT.class);
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    private static final Duration T = Duration.ofSeconds(4);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private static TestingServer zookeeper;
    private static CuratorFramework observer;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private String cluster;
    private CuratorFramework view;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = TestZooKeeper.start();
        observer = CuratorFrameworkFactory.newClient(zookeeper.getConnectString(), new RetryOneTime(100));
        observer.start();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        observer.close();
        zookeeper.close();
    }

    @BeforeEach
    void newCluster() {
        cluster = "sf" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        view = observer.usingNamespace(new ZkLayout(cluster).namespace());
    }

    @AfterEach
    void closeAll() throws Exception {
        // generators before registries before proxies
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private <C extends AutoCloseable> C track(C closeable) {
        closeables.add(closeable);
        return closeable;
    }

    private CuratorWorkerIdRegistry registry(String owner) {
        return registry(owner, zookeeper.getConnectString());
    }

    private CuratorWorkerIdRegistry registry(String owner, String connectString) {
        return track(CuratorWorkerIdRegistry.builder()
                .connectString(connectString)
                .cluster(cluster)
                .owner(owner)
                .sessionTimeout(T)
                .operationTimeout(Duration.ofSeconds(1))
                .build());
    }

    private static ZooKeeper zk(CuratorWorkerIdRegistry registry) {
        try {
            return registry.curator().getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private SlotMark mark(int slot) throws Exception {
        return SlotMark.decode(view.getData().forPath(new ZkLayout(cluster).workerIdMark(slot)));
    }

    private static long maxTimestamp(ClusterSnowflakeIds ids, long[] issued) {
        return Arrays.stream(issued)
                .map(id -> ids.decode(id).timestampMillis())
                .max()
                .orElseThrow();
    }

    @Test
    void anIdleGeneratorLetsItsReservationLapseAndTheNextIdRenewsIt() throws Exception {
        Duration reservation = Duration.ofMillis(800);
        CuratorWorkerIdRegistry registry = registry("owner-a");
        ClusterSnowflakeIds ids = track(ClusterSnowflakeIds.builder()
                .registry(registry)
                .preferredWorkerId(2)
                .reservation(reservation)
                .build());
        SnowflakeId first = ids.decode(ids.nextId());
        // while ids flowed the mark was kept ahead; once idle, the background stops writing it
        Thread.sleep(reservation.toMillis() * 2);
        long settled = mark(2).reservedUntilMillis();
        Thread.sleep(reservation.toMillis() * 3);
        assertThat(mark(2).reservedUntilMillis()).isEqualTo(settled);
        assertThat(settled).isGreaterThanOrEqualTo(first.timestampMillis());

        SnowflakeId next = ids.decode(ids.nextId());
        assertThat(next.timestampMillis()).isGreaterThan(settled);
        assertThat(mark(2).reservedUntilMillis()).isGreaterThanOrEqualTo(next.timestampMillis());
    }

    @Test
    void idsCarryTheHeldWorkerIdIncreaseAndAreCoveredByTheMark() throws Exception {
        CuratorWorkerIdRegistry registry = registry("owner-a");
        ClusterSnowflakeIds ids = track(ClusterSnowflakeIds.builder()
                .registry(registry)
                .preferredWorkerId(6)
                .datacenterId(3)
                .build());

        long[] issued = new long[50_000];
        for (int i = 0; i < issued.length; i++) {
            issued[i] = ids.nextId();
        }

        assertThat(ids.workerId()).hasValue(6);
        for (int i = 1; i < issued.length; i++) {
            assertThat(issued[i]).isGreaterThan(issued[i - 1]);
        }
        SnowflakeId last = ids.decode(issued[issued.length - 1]);
        assertThat(last.workerId()).isEqualTo(6);
        assertThat(last.datacenterId()).isEqualTo(3);
        assertThat(mark(6).reservedUntilMillis()).isGreaterThanOrEqualTo(last.timestampMillis());
        assertThat(mark(6).owner()).isEqualTo("owner-a");
        assertThatThrownBy(
                        () -> ClusterSnowflakeIds.builder().registry(registry).build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));

        ids.close();
        // a graceful close lowers the mark to the last id actually issued, and frees the slot
        assertThat(mark(6).reservedUntilMillis()).isEqualTo(last.timestampMillis());
        assertThat(registry.current()).isEmpty();
        assertThatThrownBy(ids::nextId).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                .isEqualTo(ErrorCode.ILLEGAL_STATE));
    }

    @Test
    void aSuccessorWithASlowerClockStartsAfterItsPredecessor() {
        ClusterSnowflakeIds first = track(ClusterSnowflakeIds.builder()
                .registry(registry("owner-a"))
                .preferredWorkerId(9)
                .build());
        long[] before = new long[20_000];
        for (int i = 0; i < before.length; i++) {
            before[i] = first.nextId();
        }
        long lastBefore = maxTimestamp(first, before);
        first.close();

        // 600 ms behind the predecessor's last id (anchored to it, so a slow machine does not erode
        // the gap): a plain generator on this clock would reuse the predecessor's milliseconds
        CuratorWorkerIdRegistry registryB = registry("owner-b");
        Clock slow = Clock.offset(Clock.systemUTC(), Duration.ofMillis(lastBefore - System.currentTimeMillis() - 600));
        assertThat(slow.millis()).isLessThan(lastBefore);
        ClusterSnowflakeIds second = track(ClusterSnowflakeIds.builder()
                .registry(registryB)
                .preferredWorkerId(9)
                .clock(slow)
                .build());
        long firstAfter = second.nextId();

        assertThat(second.workerId()).hasValue(9);
        assertThat(second.decode(firstAfter).timestampMillis()).isGreaterThan(lastBefore);
        assertThat(firstAfter).isGreaterThan(Arrays.stream(before).max().orElseThrow());
    }

    /**
     * The holder is cut off and its session expired on the server while it keeps generating: the
     * slot's next holder takes over at once, yet everything the cut-off holder issued lies at or below
     * the mark it left, and the new holder starts above it.
     */
    @Test
    void aCutOffHolderNeverOverlapsTheOneThatTookItsSlotOver() throws Exception {
        BlackHoleProxy proxy = BlackHoleProxy.to(zookeeper.getPort());
        CuratorWorkerIdRegistry registryA = registry("owner-a", proxy.connectString());
        closeables.add(0, proxy); // closed last
        ClusterSnowflakeIds a = track(ClusterSnowflakeIds.builder()
                .registry(registryA)
                .preferredWorkerId(4)
                .reservation(Duration.ofSeconds(1))
                .build());
        CuratorWorkerIdRegistry registryB = registry("owner-b");
        List<Long> fromA = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        Thread loser = new Thread(() -> {
            while (!stop.get()) {
                try {
                    fromA.add(a.nextId());
                } catch (PidPoolException e) {
                    // lost: retried until stopped
                }
            }
        });
        loser.start();
        await().atMost(WAIT).until(() -> fromA.size() > 10_000);

        ZooKeeper sessionA = zk(registryA);
        proxy.blackHole();
        ZooKeeperSessions.expire(zookeeper.getConnectString(), sessionA.getSessionId(), sessionA.getSessionPasswd());
        long markLeftByA = mark(4).reservedUntilMillis();
        // B takes the slot while A, cut off, still believes it holds it and keeps generating
        assertThat(registryB.acquire(OptionalInt.of(4), lost -> {}).workerId()).isEqualTo(4);
        ClusterSnowflakeIds b =
                track(ClusterSnowflakeIds.builder().registry(registryB).build());
        long firstOfB = b.nextId();
        int issuedByAWhileCutOff = fromA.size();

        proxy.restore();
        await().atMost(WAIT).until(() -> a.workerId().isPresent());
        stop.set(true);
        loser.join(WAIT.toMillis());

        assertThat(b.workerId()).hasValue(4);
        assertThat(a.workerId()).isNotEqualTo(OptionalInt.of(4)); // A came back on another slot
        long lastOfAOnSlot4 = fromA.stream()
                .map(a::decode)
                .filter(id -> id.workerId() == 4)
                .mapToLong(SnowflakeId::timestampMillis)
                .max()
                .orElseThrow();
        log.info(
                "A issued {} ids in all ({} by the time B started), last on slot 4 at {}, mark {}, B's first at {}",
                fromA.size(),
                issuedByAWhileCutOff,
                lastOfAOnSlot4,
                markLeftByA,
                b.decode(firstOfB).timestampMillis());
        assertThat(lastOfAOnSlot4).isLessThanOrEqualTo(markLeftByA);
        assertThat(b.decode(firstOfB).timestampMillis()).isGreaterThan(markLeftByA);
        assertThat(fromA).doesNotHaveDuplicates().doesNotContain(firstOfB);
    }

    @Test
    void aPartitionStopsTheIdsAndTheSameSlotComesBackAfterwards() throws Exception {
        BlackHoleProxy proxy = BlackHoleProxy.to(zookeeper.getPort());
        CuratorWorkerIdRegistry registry = registry("owner-a", proxy.connectString());
        closeables.add(0, proxy); // closed last
        ClusterSnowflakeIds ids = track(ClusterSnowflakeIds.builder()
                .registry(registry)
                .preferredWorkerId(21)
                .build());
        long before = ids.nextId();

        proxy.blackHole();
        await().atMost(WAIT).until(() -> ids.workerId().isEmpty());
        assertThatThrownBy(ids::nextId).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                .isEqualTo(ErrorCode.UNAVAILABLE));

        proxy.restore();
        await().atMost(WAIT).ignoreExceptions().until(() -> ids.nextId() > before);
        assertThat(ids.workerId()).hasValue(21);
    }

    /**
     * Four clients (one thread, one ZooKeeper session and one clock each, up to 180 ms apart) share
     * five free slots (the other 27 are taken by foreign nodes) and each round take a different one,
     * generating flat out, so slots change hands all the time; midway one client's session is expired
     * on the server, so its slot is taken over while it may still be issuing. Not one id may repeat.
     */
    @Test
    void fourClientsPassingFiveSlotsAroundNeverIssueTheSameId() throws Exception {
        ZkLayout layout = new ZkLayout(cluster);
        for (int slot = 5; slot < 32; slot++) {
            view.create()
                    .creatingParentsIfNeeded()
                    .withMode(CreateMode.PERSISTENT)
                    .forPath(layout.workerId(slot));
        }
        int clients = 4;
        int rounds = 12;
        int perRound = 20_000;
        List<CuratorWorkerIdRegistry> registries = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            registries.add(registry("client-" + c));
        }
        // machines' clocks differ: client c runs 60·c ms behind client 0, so a slot handed to a slower
        // client would reuse the milliseconds of its predecessor without the hand-over marks
        List<Clock> clocks = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            clocks.add(Clock.offset(Clock.systemUTC(), Duration.ofMillis(-60L * c)));
        }
        Map<Integer, List<String>> holdersBySlot = new ConcurrentHashMap<>();
        AtomicLong refusals = new AtomicLong();
        CountDownLatch midRound = new CountDownLatch(1);
        CountDownLatch expired = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        List<Future<long[]>> results = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int client = c;
            results.add(pool.submit(() -> {
                long[] issued = new long[rounds * perRound];
                int n = 0;
                for (int round = 0; round < rounds; round++) {
                    try (ClusterSnowflakeIds ids = ClusterSnowflakeIds.builder()
                            .registry(registries.get(client))
                            .clock(clocks.get(client))
                            .preferredWorkerId((client + round) % 5)
                            .reservation(Duration.ofSeconds(1))
                            .maxLead(Duration.ofMillis(200))
                            .build()) {
                        for (int i = 0; i < perRound; ) {
                            if (client == 0 && round == rounds / 2 && i == perRound / 2 && midRound.getCount() > 0) {
                                // client 0 is in the middle of a round, holding a slot: expire its session
                                midRound.countDown();
                                assertThat(expired.await(WAIT.toSeconds(), TimeUnit.SECONDS))
                                        .isTrue();
                            }
                            try {
                                long id = ids.nextId();
                                if (i == 0) {
                                    holdersBySlot
                                            .computeIfAbsent(
                                                    ids.decode(id).workerId(), k -> new CopyOnWriteArrayList<>())
                                            .add("client-" + client);
                                }
                                issued[n++] = id;
                                i++;
                            } catch (PidPoolException e) {
                                if (!e.code().retryable()) {
                                    throw e;
                                }
                                refusals.incrementAndGet();
                            }
                        }
                    }
                }
                return issued;
            }));
        }
        pool.shutdown();
        assertThat(midRound.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long expiredSession = zk(registries.get(0)).getSessionId();
        ZooKeeperSessions.expire(zookeeper.getConnectString(), zk(registries.get(0)));
        expired.countDown();

        long[] all = new long[clients * rounds * perRound];
        int offset = 0;
        for (Future<long[]> f : results) {
            long[] issued = f.get(60, TimeUnit.SECONDS);
            System.arraycopy(issued, 0, all, offset, issued.length);
            offset += issued.length;
        }
        Arrays.sort(all);
        int duplicates = 0;
        for (int i = 1; i < all.length; i++) {
            if (all[i] == all[i - 1]) {
                duplicates++;
            }
        }
        int handOvers = 0;
        for (List<String> holders : holdersBySlot.values()) {
            for (int i = 1; i < holders.size(); i++) {
                if (!holders.get(i).equals(holders.get(i - 1))) {
                    handOvers++;
                }
            }
        }
        log.info(
                "{} ids from {} clients, {} hand-overs between clients, {} refusals, duplicates {}",
                all.length,
                clients,
                handOvers,
                refusals.get(),
                duplicates);
        assertThat(duplicates).isZero();
        assertThat(zk(registries.get(0)).getSessionId()).isNotEqualTo(expiredSession);
        assertThat(holdersBySlot.keySet()).allSatisfy(slot -> assertThat(slot).isBetween(0, 4));
        assertThat(handOvers).isGreaterThanOrEqualTo(rounds);
    }
}
