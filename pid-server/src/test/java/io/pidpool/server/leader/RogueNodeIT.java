package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RogueNodeIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void garbageWrittenByARogueClientIsLoggedAndRepairedWithoutTouchingOtherPids() throws Exception {
        List<String> pids = cluster.addPids(A, 2, "a", 30);
        ClusterMember node = cluster.startNode("s1");
        SimulatedInstance first = cluster.startInstance(A);
        SimulatedInstance second = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        String spoiled = first.held().iterator().next();
        String spoiledPath = TestCluster.LAYOUT.pid(A, first.id(), spoiled);
        long spoiledAt = System.nanoTime();

        try (CuratorFramework rogue =
                ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace())) {
            byte[] junk = "definitely not a pid node".getBytes(StandardCharsets.UTF_8);
            rogue.setData().forPath(spoiledPath, junk);
            // nodes PidPool never writes: a bad instance name, a bad PID name, junk in a module
            rogue.create().forPath(TestCluster.LAYOUT.module(A) + "/bad name!", junk);
            rogue.create().forPath(TestCluster.LAYOUT.pids(A, second.id()) + "/bad pid!", junk);
            rogue.create().creatingParentsIfNeeded().forPath("/modules/not-a-module/x", junk);

            // the spoiled PID is revoked (a well-formed DELETING over the junk), then handed out again
            await().atMost(Duration.ofSeconds(40))
                    .until(() -> first.events().stream()
                                    .anyMatch(e ->
                                            e.pid().equals(spoiled) && e.kind().equals("REVOKED"))
                            && cluster.settled(A, pids));
        }
        assertThat(node.isLeader()).isTrue();
        for (SimulatedInstance sim : List.of(first, second)) {
            assertThat(sim.events())
                    .filteredOn(e -> e.nanos() > spoiledAt && !e.pid().equals(spoiled))
                    .isEmpty();
        }
        String holder = cluster.holders().get(spoiled).iterator().next();
        CuratorFramework reader = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
        PidNode repaired = PidNode.decode(reader.getData()
                .forPath(TestCluster.LAYOUT.pid(A, io.pidpool.core.model.InstanceId.of(holder), spoiled)));
        assertThat(repaired.state()).isEqualTo(PidState.ADDED);
        reader.close();
        cluster.assertNoDoubleLogin();
    }

    @Test
    void aPidNobodyCanLogInWithIsRetriedThenCooledDown() {
        List<String> pids = cluster.addPids(A, 2, "a", 10);
        List<String> alerts = new CopyOnWriteArrayList<>();
        SimulatedInstance first = cluster.startInstance(A);
        SimulatedInstance second = cluster.startInstance(A);
        first.failOn("a-3");
        second.failOn("a-3");
        // the leader starts only now: it hands out a new instance's share right behind its handshake,
        // so an instance registered under a running leader may get a-3 before failOn is set
        cluster.startNode("s1", b -> b.alerts(alerts::add));
        List<String> rest = pids.stream().filter(p -> !p.equals("a-3")).toList();

        await().atMost(Duration.ofSeconds(40))
                .until(() -> cluster.pid("a-3").status() == PidAvailability.COOLDOWN
                        && first.held().size() + second.held().size() == 9);
        assertThat(cluster.holders().keySet()).containsExactlyInAnyOrderElementsOf(rest);
        long failures =
                first.events().stream().filter(e -> e.kind().equals("FAILED")).count()
                        + second.events().stream()
                                .filter(e -> e.kind().equals("FAILED"))
                                .count();
        assertThat(failures).isEqualTo(3); // maxFailures in the test settings
        assertThat(alerts).anyMatch(a -> a.contains("a-3") && a.contains("cooldown"));
        cluster.assertNoDoubleLogin();
    }
}
