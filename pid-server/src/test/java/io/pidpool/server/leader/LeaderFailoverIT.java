package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.ZkSupport;
import io.pidpool.server.zk.ZkWrite;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LeaderFailoverIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    ClusterMember awaitLeader() {
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.leader() != null);
        return cluster.leader();
    }

    @Test
    void aNewLeaderKeepsEveryHeldPidWhereItIs() {
        List<String> pids = cluster.addPids(A, 4, "a", 200);
        for (String id : List.of("s1", "s2", "s3")) {
            cluster.startNode(id);
        }
        ClusterMember first = awaitLeader();
        Epoch firstEpoch = first.epoch();
        for (int i = 0; i < 4; i++) {
            cluster.startInstance(A);
        }
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        Map<String, Set<String>> before = cluster.holders();
        long failoverAt = System.nanoTime();

        first.close();
        ClusterMember second = awaitLeader();
        assertThat(second).isNotSameAs(first);
        assertThat(second.epoch()).isEqualTo(firstEpoch.next());
        // let the new leader run its election pass, several level-triggered passes and a rescan
        await().atMost(Duration.ofSeconds(40))
                .until(() -> second.passes() >= 10
                        && cluster.assignments().values().stream()
                                .allMatch(row -> row.epoch().equals(second.epoch())));

        assertThat(cluster.holders()).isEqualTo(before);
        for (SimulatedInstance sim : cluster.instances) {
            assertThat(sim.events()).noneMatch(e -> e.nanos() > failoverAt);
        }
        cluster.assertNoDoubleLogin();
    }

    @Test
    void aLeaderWhoseSessionExpiredMidHandoffIsFencedOffOnItsNextWrite() throws Exception {
        List<String> pids = cluster.addPids(A, 2, "a", 40);
        for (String id : List.of("s1", "s2", "s3")) {
            cluster.startNode(id);
        }
        ClusterMember old = awaitLeader();
        SimulatedInstance holder = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> holder.held().size() == 40);

        // a second instance joins but never answers ADDING: the handoff of 20 PIDs stays in the middle
        SimulatedInstance joiner =
                new SimulatedInstance(cluster.zk.connectString(), TestCluster.LAYOUT, A, "late", cluster.platform);
        joiner.holdBackAdds();
        cluster.instances.add(joiner.start());
        CuratorFramework reader = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
        String joinerPids = TestCluster.LAYOUT.pids(A, joiner.id());
        await().atMost(Duration.ofSeconds(40)).until(() -> countAdding(reader, joinerPids) == 20);
        assertThat(holder.held()).hasSize(20);

        FencedWriter oldWriter = old.currentWriter();
        Epoch oldEpoch = old.epoch();
        ZkTestSupport.expireOnServer(old.curator(), cluster.zk.connectString());

        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.nodes.stream()
                .anyMatch(n -> n != old && n.isLeader() && n.epoch().compareTo(oldEpoch) > 0));
        long afterFailover = System.nanoTime();

        // the deposed leader's next write: withdraw one of the ADDINGs. It must not land.
        await().atMost(Duration.ofSeconds(40)).until(() -> !old.isLeader());
        String victim = reader.getChildren().forPath(joinerPids).get(0);
        String path = joinerPids + "/" + victim;
        Stat stat = new Stat();
        PidNode node = PidNode.decode(reader.getData().storingStatIn(stat).forPath(path));
        PidNode deleting =
                new PidNode(node.pidId(), PidState.DELETING, oldEpoch, node.ownerSessionId(), node.account(), "");
        List<ZkWrite> write = List.of(new ZkWrite.SetData(path, deleting.encode(), stat.getVersion()));
        assertFenced(oldWriter, write);
        // even sent over a live session, ZooKeeper itself refuses it: /epoch has moved on
        FenceToken stale = new FenceToken(
                oldWriter.token().epoch(),
                oldWriter.token().epochVersion(),
                old.curator().getZookeeperClient().getZooKeeper().getSessionId());
        FencedWriter resent = new FencedWriter(
                () -> ZkSupport.zooKeeper(old.curator()),
                TestCluster.LAYOUT.namespace(),
                TestCluster.LAYOUT.epoch(),
                stale,
                200,
                1,
                e -> {});
        assertFenced(resent, write);
        assertThat(resent.opsSent()).isEqualTo(2); // it did go to ZooKeeper: check + setData
        assertThat(PidNode.decode(reader.getData().forPath(path)).state()).isEqualTo(PidState.ADDING);

        // the new leader keeps both halves where they are: nothing held moves because of the failover
        ClusterMember current = cluster.leader();
        await().atMost(Duration.ofSeconds(10)).until(() -> current.passes() >= 5);
        assertThat(holder.held()).hasSize(20);
        assertThat(holder.events()).noneMatch(e -> e.nanos() > afterFailover);
        assertThat(countAdding(reader, joinerPids)).isEqualTo(20);
        assertThat(pids).hasSize(40);
        reader.close();
        cluster.assertNoDoubleLogin();
    }

    static void assertFenced(FencedWriter writer, List<ZkWrite> writes) throws Exception {
        var attempt = writer.submit(writes);
        writer.flush();
        try {
            attempt.get(10, TimeUnit.SECONDS);
            throw new AssertionError("a deposed leader's write went through");
        } catch (ExecutionException e) {
            assertThat(((PidPoolException) e.getCause()).code()).isEqualTo(ErrorCode.FENCED);
        }
    }

    static long countAdding(CuratorFramework reader, String pidsPath) throws Exception {
        if (reader.checkExists().forPath(pidsPath) == null) {
            return 0;
        }
        long count = 0;
        for (String child : reader.getChildren().forPath(pidsPath)) {
            try {
                if (PidNode.decode(reader.getData().forPath(pidsPath + "/" + child))
                                .state()
                        == PidState.ADDING) {
                    count++;
                }
            } catch (Exception e) {
                // removed meanwhile
            }
        }
        return count;
    }
}
