package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class AllocationIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey B = ModuleKey.parse("ops#audit#reader");
    static final ModuleKey C = ModuleKey.parse("mkt#quote#feed");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void thousandPidsOverThreeModulesAndTenInstancesAreHeldDisjointAndBalanced() {
        List<String> a = cluster.addPids(A, 4, "a", 400);
        List<String> b = cluster.addPids(B, 3, "b", 350);
        List<String> c = cluster.addPids(C, 3, "c", 250);
        // slots: each module is pre-split for its configured servers, so instances starting one by one
        // each find their share and nothing is reshuffled while they come up
        ClusterMember node = cluster.startNode(
                "s1", builder -> builder.settings(TestCluster.settings().withRebalanceDelay(Duration.ofMinutes(1))));
        for (int i = 0; i < 4; i++) {
            cluster.startInstance(A);
        }
        for (int i = 0; i < 3; i++) {
            cluster.startInstance(B);
            cluster.startInstance(C);
        }
        await().atMost(Duration.ofSeconds(30))
                .conditionEvaluationListener(c1 -> {
                    if (c1.getRemainingTimeInMS() < 1000) {
                        System.out.println(cluster.describe(A, a) + "\n" + cluster.describe(B, b) + "\n"
                                + cluster.describe(C, c) + "\n" + node.describeForTests());
                    }
                })
                .until(() -> cluster.settled(A, a) && cluster.settled(B, b) && cluster.settled(C, c));
        cluster.assertNoDoubleLogin();
        assertThat(cluster.instances)
                .as("no PID moved while the instances came up")
                .allSatisfy(
                        sim -> assertThat(sim.events()).noneMatch(e -> e.kind().equals("REVOKED")));
        assertThat(node.isLeader()).isTrue();
        FencedWriterStats stats = FencedWriterStats.of(node);
        System.out.printf("fenced multi-ops: %d carrying %d operations%n", stats.multis(), stats.ops());
        // batched: many writes per round trip, never one synchronous call per PID
        assertThat(stats.ops()).isGreaterThan(4 * stats.multis());
        await().atMost(Duration.ofSeconds(10))
                .until(() -> cluster.assignments().size() == 1000
                        && cluster.assignments().values().stream()
                                .allMatch(r -> r.state() == io.pidpool.core.model.PidState.ADDED));

        // the read side the HTTP layer uses
        ReadModel.Cluster info = node.cluster();
        assertThat(info.isLeader()).isTrue();
        assertThat(info.leaderId()).isEqualTo("s1");
        assertThat(info.members()).containsExactly("s1");
        assertThat(info.epoch()).isEqualTo(node.epoch());
        assertThat(node.modules())
                .extracting(ReadModel.Module::key, ReadModel.Module::pids, ReadModel.Module::held)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(A, 400, 400),
                        org.assertj.core.groups.Tuple.tuple(C, 250, 250),
                        org.assertj.core.groups.Tuple.tuple(B, 350, 350));
        assertThat(node.module(A).instances())
                .hasSize(4)
                .allSatisfy(i -> assertThat(i.held()).isEqualTo(100))
                .allSatisfy(i -> assertThat(i.live()).isTrue());
        assertThat(node.pids(B, io.pidpool.core.model.PidState.ADDED)).hasSize(350);
        assertThat(node.pids(null, null)).hasSize(1000).allSatisfy(p -> assertThat(p.instance())
                .isNotNull());

        // join of two instances in A: 400 over 6 -> four keep 67, two get 66: 132 moves, nothing else
        Map<SimulatedInstance, Set<String>> heldBefore = new HashMap<>();
        cluster.instances.forEach(s -> heldBefore.put(s, s.held()));
        long joinedAt = System.nanoTime();
        cluster.startInstance(A);
        cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.settled(A, a));
        int moved = 0;
        for (var e : heldBefore.entrySet()) {
            Set<String> now = e.getKey().held();
            for (String pid : e.getValue()) {
                if (!now.contains(pid)) {
                    moved++;
                }
            }
        }
        assertThat(moved).isEqualTo(132);
        long revokes = cluster.instances.stream()
                .flatMap(s -> s.events().stream())
                .filter(ev -> ev.kind().equals("REVOKED") && ev.nanos() > joinedAt)
                .count();
        assertThat(revokes).isEqualTo(132);
        assertThat(cluster.settled(B, b) && cluster.settled(C, c)).isTrue();
        cluster.assertNoDoubleLogin();
    }
}
