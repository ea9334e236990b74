package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import io.pidpool.server.zk.ZkSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.AddWatchMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A change committed after the follower's last replayed event and before its election steps must be
 * in the view its first pass decides on: whatever the term starts from, it must not decide on a view
 * that lags behind its {@code sync()}. A warm start from the watcher's view as it was (session 3)
 * failed this test; the term now starts from the watcher's view only when the watcher proves it
 * current ({@code TreeWatcher.proveCurrent}, docs/leader.md §2a), which this test requires, so that
 * the proof's barrier is what is being tested here (without its wait for the reads, the platform
 * records double logins).
 */
class LateChangeFailoverIT {
    static final ModuleKey A = ModuleKey.parse("fin#warm#start");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    /**
     * The old leader's last act (simulated): 600 new PIDs written ADDING to one of two instances, after
     * the follower's view last moved and before its term's first step. The follower's ZooKeeper event
     * thread is slowed down, so that when its {@code sync()} answers, most of the watcher's reads of
     * those nodes are still in flight. A term that trusted the watcher's view at that point would see
     * the 600 PIDs unheld and hand about half of them to the other instance as well: a double login,
     * which the platform records. A current view sees them held and moves them only by revoke, ack,
     * then add.
     */
    @Test
    void aChangeJustBeforeTheElectionIsInTheViewOfTheFirstPass() throws Exception {
        TestCluster.Settled settled = cluster.leaderWithTwoInstances(A, "w", 40, b -> b);
        List<String> pids = settled.pids();
        ClusterMember old = settled.leader();
        SimulatedInstance first = settled.first();
        SimulatedInstance second = settled.second();
        Epoch oldEpoch = old.epoch();

        CuratorFramework admin = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
        AtomicBoolean slow = new AtomicBoolean();
        List<String> late = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            late.add("late-" + i);
        }
        Runnable lastActOfTheOldLeader = () -> {
            try {
                slow.set(true);
                List<PidRecord> accounts = new ArrayList<>();
                List<CuratorOp> creates = new ArrayList<>();
                for (String pid : late) {
                    PidRecord account =
                            new PidRecord(pid, A, 10_000, 0, PidAvailability.ACTIVE, TestCluster.secret(pid), Map.of());
                    accounts.add(account);
                    PidNode adding = PidNode.instruction(
                            pid, PidState.ADDING, oldEpoch, first.sessionId(), DbView.payload(account));
                    creates.add(admin.transactionOp()
                            .create()
                            .forPath(TestCluster.LAYOUT.pid(A, first.id(), pid), adding.encode()));
                }
                cluster.repositories.pids().insertAll(accounts);
                admin.transaction().forOperations(creates);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
        ClusterMember successor = cluster.startNode("s2", b -> b.beforeTerm(lastActOfTheOldLeader));
        await().atMost(Duration.ofSeconds(40))
                .until(() -> successor.pids(A, PidState.ADDED).size() == pids.size());
        // a second watcher on the successor's session that takes 2 ms per event once armed: every
        // event of that session (the view's reads among them) is handled that much later
        successor
                .curator()
                .getZookeeperClient()
                .getZooKeeper()
                .addWatch(
                        ZkSupport.absolute(TestCluster.LAYOUT.namespace(), TestCluster.LAYOUT.modules()),
                        event -> {
                            if (slow.get()) {
                                try {
                                    Thread.sleep(2);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                            }
                        },
                        AddWatchMode.PERSISTENT_RECURSIVE);

        old.close();
        await().atMost(Duration.ofSeconds(40)).until(successor::isLeader);
        assertThat(successor.lastTermStart().current())
                .as("the term started from the proven view, else: "
                        + successor.lastTermStart().reason())
                .isTrue();

        List<String> all = new ArrayList<>(pids);
        all.addAll(late);
        await().atMost(Duration.ofSeconds(60)).until(() -> cluster.settled(A, all));
        cluster.assertNoDoubleLogin();
        assertThat(first.held().size() + second.held().size()).isEqualTo(all.size());
        admin.close();
    }
}
