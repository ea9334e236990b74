package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class InstanceLossIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void aVanishedInstancesPidsGoElsewhereOnlyAfterTheGracePeriod() throws Exception {
        List<String> pids = cluster.addPids(A, 3, "a", 60);
        // a grace well above the simulated client's detection delay (heartbeat every T/6), so that a
        // loaded build machine does not turn scheduling delays into double logins
        ClusterMember node =
                cluster.startNode("s1", b -> b.settings(TestCluster.settings().withGrace(Duration.ofSeconds(3))));
        SimulatedInstance victim = cluster.startInstance(A);
        SimulatedInstance one = cluster.startInstance(A);
        SimulatedInstance two = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        Duration grace = node.grace();
        assertThat(grace).isEqualTo(Duration.ofSeconds(3));
        Set<String> orphaned = victim.held();
        assertThat(orphaned).hasSize(20);

        long vanishedAt = System.nanoTime();
        ZkTestSupport.expireOnServer(victim.curator(), cluster.zk.connectString()); // ephemeral node gone now
        cluster.remove(victim);

        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        for (SimulatedInstance survivor : List.of(one, two)) {
            for (SimulatedInstance.Event event : survivor.events()) {
                if (event.kind().equals("ASSIGNED") && orphaned.contains(event.pid())) {
                    assertThat(Duration.ofNanos(event.nanos() - vanishedAt))
                            .as("%s taken up by %s", event.pid(), survivor.id())
                            .isGreaterThanOrEqualTo(grace);
                }
            }
        }
        assertThat(one.held().size() + two.held().size()).isEqualTo(60);
        victim.events().stream()
                .filter(e -> e.nanos() > vanishedAt - 1_000_000_000L)
                .forEach(e -> System.out.println(
                        "victim " + e.kind() + " " + e.pid() + " +" + (e.nanos() - vanishedAt) / 1_000_000 + "ms"));
        cluster.assertNoDoubleLogin();
        victim.crash();
    }

    @Test
    void aReplacementTakesTheVanishedInstancesShareAndNothingElseMoves() throws Exception {
        List<String> pids = cluster.addPids(A, 3, "a", 60);
        cluster.startNode("s1", b -> b.settings(TestCluster.settings().withRebalanceDelay(Duration.ofMinutes(1))));
        SimulatedInstance victim = cluster.startInstance(A);
        SimulatedInstance one = cluster.startInstance(A);
        SimulatedInstance two = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        Set<String> share = victim.held();
        Set<String> oneHeld = one.held();
        Set<String> twoHeld = two.held();

        victim.crash(); // the process dies; its session closes and its ephemeral node goes
        cluster.remove(victim);
        SimulatedInstance replacement = cluster.startInstance(A);
        // after the grace period the replacement gets exactly the dead instance's accounts
        await().atMost(Duration.ofSeconds(40)).until(() -> replacement.held().equals(share));
        assertThat(one.held()).isEqualTo(oneHeld);
        assertThat(two.held()).isEqualTo(twoHeld);
        assertThat(one.events()).noneMatch(e -> e.kind().equals("REVOKED"));
        assertThat(two.events()).noneMatch(e -> e.kind().equals("REVOKED"));
        cluster.assertNoDoubleLogin();
    }

    @Test
    void whenMostInstancesVanishAtOnceTheBrakeHoldsTheirPidsBackAndRaisesAnAlert() {
        List<String> pids = cluster.addPids(A, 4, "a", 40);
        List<String> alerts = new java.util.concurrent.CopyOnWriteArrayList<>();
        cluster.startNode("s1", b -> b.alerts(alerts::add));
        List<SimulatedInstance> doomed =
                List.of(cluster.startInstance(A), cluster.startInstance(A), cluster.startInstance(A));
        SimulatedInstance survivor = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        Set<String> own = survivor.held();
        for (SimulatedInstance sim : doomed) {
            sim.crash();
            cluster.remove(sim);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> alerts.stream().anyMatch(a -> a.contains("brake engaged")));
        // well past the grace period the survivor still holds only its own share: no stampede
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> survivor.held()
                .equals(own));
        cluster.assertNoDoubleLogin();
    }

    @Test
    void aGracefullyClosedInstanceHandsItsPidsOnWithoutWaiting() {
        List<String> pids = cluster.addPids(A, 2, "a", 40);
        cluster.startNode("s1", b -> b.settings(TestCluster.settings().withGrace(Duration.ofMinutes(5))));
        SimulatedInstance leaving = cluster.startInstance(A);
        SimulatedInstance staying = cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));

        leaving.close(); // revokes, answers DELETED in each node, deletes its ephemeral node
        cluster.remove(leaving);
        // a five-minute grace would stop this; DELETED answers need none
        await().atMost(Duration.ofSeconds(30)).until(() -> staying.held().size() == 40);
        cluster.assertNoDoubleLogin();
    }
}
