package io.pidpool.client.internal.ids;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.client.testing.ZooKeeperSessions;
import io.pidpool.core.contract.WorkerIdRegistryContract;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.port.WorkerIdRegistry;
import io.pidpool.core.protocol.ZkLayout;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkerIdRegistryContract} on a real ZooKeeper (one participant = one Curator client = one
 * session; every test in a fresh cluster namespace), plus what only the ZooKeeper adapter has: node
 * data, partitions, server-side session expiry, deleted nodes, hand-over marks.
 */
class CuratorWorkerIdRegistryIT extends WorkerIdRegistryContract {
    private static final AtomicInteger CLUSTERS = new AtomicInteger();
    private static final Duration T = Duration.ofSeconds(4);

    private static TestingServer zookeeper;
    private static CuratorFramework observer;

    private final SplittableRandom seeds = new SplittableRandom(7);
    private final List<BlackHoleProxy> proxies = new ArrayList<>();
    private final List<WorkerIdRegistry> participantsToClose = new ArrayList<>();
    private String cluster;
    private ZkLayout layout;
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
        cluster = "ids" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        layout = new ZkLayout(cluster);
        view = observer.usingNamespace(layout.namespace());
    }

    @AfterEach
    void closeTrackedThenProxies() {
        // runs before the contract closes its participants; clients behind a proxy must go first
        participantsToClose.forEach(WorkerIdRegistry::close);
        participantsToClose.clear();
        proxies.forEach(BlackHoleProxy::close);
    }

    @Override
    protected WorkerIdRegistry createParticipant(String owner) {
        return builder(zookeeper.getConnectString()).owner(owner).build();
    }

    private CuratorWorkerIdRegistry.Builder builder(String connectString) {
        return CuratorWorkerIdRegistry.builder()
                .connectString(connectString)
                .cluster(cluster)
                .host("test-host")
                .sessionTimeout(T)
                .random(seeds.split());
    }

    @Override
    protected void loseSession(WorkerIdRegistry participant) {
        ZooKeeperSessions.expire(zookeeper.getConnectString(), zk(participant));
    }

    private static ZooKeeper zk(WorkerIdRegistry participant) {
        try {
            return ((CuratorWorkerIdRegistry) participant)
                    .curator()
                    .getZookeeperClient()
                    .getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static final WorkerIdRegistry.LossListener IGNORE = slot -> {};

    private Stat stat(String path) throws Exception {
        return view.checkExists().forPath(path);
    }

    // ---------------------------------------------------------------- adapter-specific

    @Test
    void theSlotNodeIsAnEphemeralOfTheHoldersSessionAndNamesTheHolder() throws Exception {
        CuratorWorkerIdRegistry a = (CuratorWorkerIdRegistry) newParticipant("owner-a");

        WorkerSlot slot = a.acquire(OptionalInt.of(11), IGNORE);

        long session = zk(a).getSessionId();
        assertThat(stat(layout.workerId(11)).getEphemeralOwner()).isEqualTo(session);
        SlotHolder holder = SlotHolder.decode(view.getData().forPath(layout.workerId(11)));
        assertThat(holder.owner()).isEqualTo("owner-a");
        assertThat(holder.host()).isEqualTo("test-host");
        assertThat(holder.sessionId()).isEqualTo(session);
        assertThat(a.holders()).isEqualTo(Map.of(11, holder));
        assertThat(a.slotsPath()).isEqualTo("/pidpool/" + cluster + "/worker-ids");
        // the hand-over mark is persistent and claimed by the holder
        assertThat(stat(layout.workerIdMark(11)).getEphemeralOwner()).isZero();
        SlotMark mark = SlotMark.decode(view.getData().forPath(layout.workerIdMark(11)));
        assertThat(mark).isEqualTo(new SlotMark(-1, "owner-a", session));
        assertThat(a.floorMillis(slot)).isEqualTo(-1);
    }

    @Test
    void theNextHolderOfASlotStartsAfterItsPredecessorsMark() throws Exception {
        CuratorWorkerIdRegistry a = (CuratorWorkerIdRegistry) newParticipant("owner-a");
        CuratorWorkerIdRegistry b = (CuratorWorkerIdRegistry) newParticipant("owner-b");
        WorkerSlot slotA = a.acquire(OptionalInt.of(7), IGNORE);
        assertThat(a.reserve(slotA, 1_000)).isTrue();
        assertThat(a.reserve(slotA, 5_000)).isTrue();
        assertThat(b.reserve(slotA, 9_000)).isFalse(); // not b's slot

        a.release();
        WorkerSlot slotB = b.acquire(OptionalInt.of(7), IGNORE);

        assertThat(b.floorMillis(slotB)).isEqualTo(5_000);
        assertThat(a.reserve(slotA, 9_000)).isFalse(); // a's late write cannot move b's mark
        assertThat(SlotMark.decode(view.getData().forPath(layout.workerIdMark(7))))
                .isEqualTo(new SlotMark(5_000, "owner-b", zk(b).getSessionId()));
        assertThatThrownBy(() -> a.floorMillis(slotA))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }

    @Test
    void aMarkWrittenBySomeoneElseMakesTheHolderGiveUp() throws Exception {
        CuratorWorkerIdRegistry a = (CuratorWorkerIdRegistry) newParticipant("owner-a");
        WorkerSlot slot = a.acquire(OptionalInt.of(2), IGNORE);

        view.setData().forPath(layout.workerIdMark(2), new SlotMark(77, "intruder", 1).encode());

        assertThat(a.reserve(slot, 100)).isFalse();
        assertThat(SlotMark.decode(view.getData().forPath(layout.workerIdMark(2)))
                        .owner())
                .isEqualTo("intruder");
    }

    @Test
    void aSlotWithAnUnreadableMarkIsSkipped() throws Exception {
        CuratorWorkerIdRegistry a = (CuratorWorkerIdRegistry) newParticipant("owner-a");
        view.create()
                .creatingParentsIfNeeded()
                .forPath(layout.workerIdMark(3), "garbage".getBytes(StandardCharsets.UTF_8));

        int got = a.acquire(OptionalInt.of(3), IGNORE).workerId();

        assertThat(got).isNotEqualTo(3);
        assertThat(stat(layout.workerId(3))).isNull(); // its node was created, then deleted again
    }

    @Test
    void aPartitionSuspendsTheSlotAndTheSameSessionGetsItBack() throws Exception {
        BlackHoleProxy proxy = BlackHoleProxy.to(zookeeper.getPort());
        proxies.add(proxy);
        CuratorWorkerIdRegistry a =
                builder(proxy.connectString()).owner("owner-a").build();
        track(a);
        WorkerIdRegistry b = newParticipant("owner-b");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        WorkerSlot slot = a.acquire(OptionalInt.of(20), lost::complete);
        long session = zk(a).getSessionId();

        proxy.blackHole();
        long cut = System.nanoTime();
        assertThat(lost.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(slot);
        long toldAfterMs = (System.nanoTime() - cut) / 1_000_000;
        assertThat(a.current()).isEmpty();
        // the node survives the suspension: nobody else may take the slot meanwhile
        assertThat(b.acquire(OptionalInt.of(20), IGNORE).workerId()).isNotEqualTo(20);
        assertThat(toldAfterMs).isLessThan(T.toMillis()); // told before the server could expire the session

        proxy.restore();
        WorkerSlot back = a.acquire(OptionalInt.empty(), IGNORE);

        assertThat(back).isEqualTo(slot);
        assertThat(zk(a).getSessionId()).isEqualTo(session);
        assertThat(stat(layout.workerId(20)).getEphemeralOwner()).isEqualTo(session);
    }

    @Test
    void aSlotNodeDeletedUnderItsHolderIsALoss() throws Exception {
        WorkerIdRegistry a = newParticipant("owner-a");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        WorkerSlot slot = a.acquire(OptionalInt.of(14), lost::complete);

        view.delete().forPath(layout.workerId(14));

        assertThat(lost.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(slot);
        assertThat(a.current()).isEmpty();
        assertThat(a.acquire(OptionalInt.empty(), IGNORE).workerId()).isEqualTo(14); // prefers its last slot
    }

    @Test
    void aSharedClientKeepsItsOwnNamespaceAndIsNotClosed() throws Exception {
        CuratorFramework shared = CuratorFrameworkFactory.builder()
                .connectString(zookeeper.getConnectString())
                .namespace("somewhere/else")
                .retryPolicy(new RetryOneTime(100))
                .build();
        shared.start();
        try {
            CuratorWorkerIdRegistry a = CuratorWorkerIdRegistry.builder()
                    .curator(shared)
                    .cluster(cluster)
                    .owner("owner-shared")
                    .build();
            track(a);

            assertThat(a.acquire(OptionalInt.of(9), IGNORE).workerId()).isEqualTo(9);
            assertThat(stat(layout.workerId(9)).getEphemeralOwner())
                    .isEqualTo(shared.getZookeeperClient().getZooKeeper().getSessionId());

            a.close();
            assertThat(stat(layout.workerId(9))).isNull();
            assertThat(shared.getZookeeperClient().isConnected()).isTrue();
            assertThat(shared.checkExists().forPath("/")).isNotNull();
        } finally {
            shared.close();
        }
    }

    @Test
    void thirtyTwoClientsTakeEverySlotAndAServerSideExpiryFreesOneForTheThirtyThird() throws Exception {
        List<CuratorWorkerIdRegistry> holders = new ArrayList<>();
        Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < WorkerSlots.COUNT; i++) {
            CuratorWorkerIdRegistry p = (CuratorWorkerIdRegistry) newParticipant("client-" + i);
            holders.add(p);
            slots.add(p.acquire(OptionalInt.empty(), IGNORE).workerId());
        }
        assertThat(slots).hasSize(WorkerSlots.COUNT);
        assertThat(holders.get(0).holders()).hasSize(WorkerSlots.COUNT);
        WorkerIdRegistry late = newParticipant("client-late");

        assertThatThrownBy(() -> late.acquire(OptionalInt.empty(), IGNORE))
                .isInstanceOf(WorkerSlotsExhaustedException.class)
                .hasMessage("all 32 worker-id slots 0..31 are taken at /pidpool/" + cluster + "/worker-ids")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));

        CuratorWorkerIdRegistry victim = holders.get(17);
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        WorkerSlot victimSlot = victim.acquire(OptionalInt.empty(), lost::complete); // same slot, new listener
        long oldSession = zk(victim).getSessionId();
        ZooKeeperSessions.expire(zookeeper.getConnectString(), zk(victim));
        assertThat(stat(layout.workerId(victimSlot.workerId()))).isNull(); // dropped by the server at once

        assertThat(late.acquire(OptionalInt.empty(), IGNORE).workerId()).isEqualTo(victimSlot.workerId());
        assertThat(lost.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(victimSlot);
        // the expired client comes back on a new session and finds nothing free
        await().atMost(Duration.ofSeconds(WAIT_SECONDS))
                .until(() -> victim.curator().getZookeeperClient().isConnected()
                        && zk(victim).getSessionId() != oldSession);
        assertThatThrownBy(() -> victim.acquire(OptionalInt.of(victimSlot.workerId()), IGNORE))
                .isInstanceOf(WorkerSlotsExhaustedException.class);
    }

    private void track(CuratorWorkerIdRegistry registry) {
        participantsToClose.add(registry);
    }
}
