package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.protocol.NotifySignal;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /notify} is the only thing that wakes the leader and the waiters here, except for a batch
 * the leader accepted itself: the batch poll runs once an hour. The first batch of a term is the
 * case that used to lose its DEALED wake-up: the term saw no {@code /notify}, a follower created it
 * with DEALING, and the leader's create of DEALED then met NODEEXISTS.
 */
class NotifyWakeUpIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    static final Duration NO_POLL = Duration.ofHours(1);

    TestCluster cluster;
    CuratorFramework probe;

    @BeforeEach
    void setUp() throws Exception {
        cluster = new TestCluster();
        probe = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
    }

    @AfterEach
    void tearDown() throws Exception {
        probe.close();
        cluster.close();
    }

    private ClusterMember start(String id) {
        return start(id, NO_POLL);
    }

    private ClusterMember start(String id, Duration batchPoll) {
        LeaderSettings base = TestCluster.settings();
        return cluster.startNode(
                id, b -> b.settings(base.withIntervals(base.reconcileInterval(), base.rescanInterval(), batchPoll)));
    }

    private BatchId pendingBatch(long id, String pid) {
        var batch = OperationBatch.pending(
                new BatchId(id),
                List.of(new Operation.Add<>(A, List.of(new PidSpec<>(pid, "pw", 100, 0, Map.of())))),
                "carol",
                Instant.now());
        cluster.repositories.operations().append(BatchRecord.pending(batch, TestCluster::seal));
        return batch.id();
    }

    /** What a follower's {@code BatchService.submit} does after storing a batch, by hand. */
    private void raiseDealing(BatchId id) throws Exception {
        byte[] data = new NotifySignal(NotifySignal.Phase.DEALING, id).encode();
        String path = TestCluster.LAYOUT.notifyNode();
        while (true) { // the leader may create the node between our two calls
            try {
                probe.setData().forPath(path, data);
                return;
            } catch (KeeperException.NoNodeException absent) {
                try {
                    probe.create().forPath(path, data);
                    return;
                } catch (KeeperException.NodeExistsException raced) {
                    // set it then
                }
            }
        }
    }

    private boolean dealed(BatchId id) throws Exception {
        return NotifySignal.decode(probe.getData().forPath(TestCluster.LAYOUT.notifyNode()))
                .equals(new NotifySignal(NotifySignal.Phase.DEALED, id));
    }

    private ClusterMember awaitLeader() {
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.leader() != null);
        return cluster.leader();
    }

    @Test
    void theFirstBatchOfATermWakesItsWaitersThroughTheWatchNotThePoll() throws Exception {
        cluster.addPids(A, 1, "a", 0);
        start("s1");
        ClusterMember leader = awaitLeader();
        ClusterMember follower = start("s2");
        assertThat(probe.checkExists().forPath(TestCluster.LAYOUT.notifyNode()))
                .as("no /notify when the term began")
                .isNull();

        for (int round = 1; round <= 2; round++) {
            // stored without a signal, so the waiter registers while the batch is still PENDING
            BatchId id = pendingBatch(1000 + round, "n" + round);
            CompletableFuture<BatchRecord> onFollower = follower.batches().await(id, NO_POLL);
            CompletableFuture<BatchRecord> onLeader = leader.batches().await(id, NO_POLL);
            assertThat(follower.batches().waiting()).isEqualTo(1);

            raiseDealing(id); // round 1 creates /notify: the leader's DEALED must then set it

            // neither the leader's apply nor the waiters' answer can come from a poll within the hour
            BatchRecord done = onFollower.get(60, TimeUnit.SECONDS);
            assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
            assertThat(onLeader.get(60, TimeUnit.SECONDS)).isEqualTo(done);
            assertThat(follower.batches().waiting()).isZero();
            // a waiter may also have been answered on the DEALING event (if the commit was already
            // visible then); the leader's DEALED must arrive anyway. Without create-or-set it never
            // did in round 1: the create met NODEEXISTS and /notify stayed DEALING.
            await().atMost(Duration.ofSeconds(60)).until(() -> dealed(id));
        }
    }

    /** Without its notification, too: the leader's own DEALING can neither be written nor come back. */
    @Test
    void aBatchTheLeaderRecordsWhileNoneWaitsIsAppliedAsRecordedNotReadBack() throws Exception {
        cluster.addPids(A, 1, "a", 0);
        var log = new CountingOperationLog(cluster.repositories.operations());
        LeaderSettings base = TestCluster.settings();
        ClusterMember leader = cluster.startNode(
                "s1", b -> b.settings(base.withIntervals(base.reconcileInterval(), base.rescanInterval(), NO_POLL))
                        .repositories(BatchServiceTest.with(cluster.repositories, log, cluster.repositories.audit())));
        assertThat(awaitLeader()).isSameAs(leader);
        // the term's first poll, then nothing: a /notify nobody may write
        await().atMost(Duration.ofSeconds(30)).until(() -> log.unfinishedReads.get() == 1);
        probe.create().withACL(ZooDefs.Ids.READ_ACL_UNSAFE).forPath(TestCluster.LAYOUT.notifyNode(), new byte[0]);

        BatchId alone = leader.batches().submit(add("own-1"), "carol");
        await().atMost(Duration.ofSeconds(30)).until(() -> status(alone) == BatchStatus.DEALED);
        assertThat(log.unfinishedReads.get())
                .as("the batch in hand was the only one waiting: applied without reading the batches")
                .isEqualTo(1);
        assertThat(cluster.repositories.pids().find("own-1")).isPresent();

        // one recorded without a signal waits before it: the term reads and applies both, in order
        BatchId older = pendingBatch(5000, "older");
        BatchId newer = leader.batches().submit(add("own-2"), "carol");
        assertThat(older.value()).isLessThan(newer.value());
        await().atMost(Duration.ofSeconds(30)).until(() -> status(newer) == BatchStatus.DEALED);
        assertThat(status(older)).isEqualTo(BatchStatus.DEALED);
        assertThat(log.unfinishedReads.get()).isEqualTo(2);
        assertThat(cluster.repositories.pids().find("older")).isPresent();
        assertThat(cluster.repositories.pids().find("own-2")).isPresent();
    }

    private static List<Operation<String>> add(String pid) {
        return List.of(new Operation.Add<>(A, List.of(new PidSpec<>(pid, "pw", 100, 0, Map.of()))));
    }

    private BatchStatus status(BatchId id) {
        return cluster.repositories.operations().find(id).orElseThrow().status();
    }

    @Test
    void aDeletedNotifyNodeIsCreatedAgainForTheNextDealed() throws Exception {
        cluster.addPids(A, 1, "a", 0);
        start("s1", Duration.ofMillis(200)); // the leader finds batches by polling as well
        assertThat(awaitLeader().nodeId()).isEqualTo("s1");
        ClusterMember follower = start("s2"); // its waiters have only the watch

        BatchId first = pendingBatch(2001, "m1");
        CompletableFuture<BatchRecord> firstWaiter = follower.batches().await(first, NO_POLL);
        raiseDealing(first);
        assertThat(firstWaiter.get(60, TimeUnit.SECONDS).status()).isEqualTo(BatchStatus.DEALED);

        // someone deletes /notify: the leader believes it exists, and its setData meets NONODE.
        // No DEALING this time: the leader's poll finds the batch, and only its DEALED can wake the
        // follower. A round counts only if the waiter registered before the leader applied the batch.
        probe.delete().forPath(TestCluster.LAYOUT.notifyNode());
        int counted = 0;
        for (int round = 0; counted == 0 && round < 10; round++) {
            BatchId next = pendingBatch(2002 + round, "m2-" + round);
            CompletableFuture<BatchRecord> waiter = follower.batches().await(next, NO_POLL);
            boolean registeredInTime = !waiter.isDone();
            assertThat(waiter.get(60, TimeUnit.SECONDS).status()).isEqualTo(BatchStatus.DEALED);
            if (registeredInTime) {
                counted++;
                // nothing but the leader's DEALED (a create now) can have woken the follower
                await().atMost(Duration.ofSeconds(60)).until(() -> dealed(next));
            }
        }
        assertThat(counted)
                .as("rounds where the follower waited for the leader")
                .isEqualTo(1);
    }
}
