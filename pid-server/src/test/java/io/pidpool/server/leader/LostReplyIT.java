package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.LiveInstance;
import io.pidpool.core.allocation.ModuleSnapshot;
import io.pidpool.core.allocation.Plan;
import io.pidpool.core.allocation.PlanStep;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A lost reply for real: the leader's ADDINGs reach ZooKeeper and are applied, and the connection is
 * cut before their answer gets back, so the writes fail UNAVAILABLE with an unknown outcome. The
 * leader reconnects with the same session over a slowed link, so its re-read of the tree takes
 * seconds, while its passes go on. Its placement policy hands a PID it placed before to another
 * instance than last time (a policy is free to; the leader's own checks must keep that from doubling
 * a hold): no PID of a lost ADDING may be written anywhere before the re-read is in.
 */
class LostReplyIT {
    static final ModuleKey M = ModuleKey.parse("ops#lost#reply");
    /** Each direction of the leader's connection is slowed by this much from the hand-over on. */
    static final Duration ONE_WAY = Duration.ofMillis(300);

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    final BlackHoleProxy proxy = BlackHoleProxy.to(port(cluster.zk.connectString()));

    static int port(String connectString) {
        return Integer.parseInt(connectString.substring(connectString.lastIndexOf(':') + 1));
    }

    @AfterEach
    void closeProxy() {
        proxy.close();
    }

    @Test
    void thePidsOfLostAddingsAreWrittenNowhereBeforeTheViewIsProven() throws Exception {
        List<String> pids = cluster.addPids(M, 2, "p", 6);
        ClusterMember leader = cluster.startNode("s1", b -> b.connectString(proxy.connectString())
                .sessionTimeout(Duration.ofSeconds(4))
                .placement(grace -> new Wandering(
                        new PlannerPlacement(PlannerPolicy.defaults(grace).withRebalanceDelay(Duration.ZERO)))));
        await().atMost(Duration.ofSeconds(40)).until(leader::isLeader);
        SimulatedInstance first = cluster.startInstance(M);
        await().atMost(Duration.ofSeconds(40)).until(() -> first.held().size() == 6);

        // a second instance joins: the leader revokes three PIDs from the first and adds them to it;
        // the moment ZooKeeper has applied an ADDING (seen directly), the leader's connection is cut,
        // and the answer, still on the slowed link, dies with it
        proxy.delay(ONE_WAY);
        SimulatedInstance second = cluster.startInstance(M);
        String share = TestCluster.LAYOUT.pids(M, second.id());
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (first.curator().checkExists().forPath(share) == null
                || first.curator().getChildren().forPath(share).isEmpty()) {
            assertThat(System.nanoTime() - deadline)
                    .as("an ADDING for the second instance")
                    .isNegative();
            Thread.onSpinWait();
        }
        proxy.blackHole();
        long cut = System.nanoTime();
        List<String> landed = first.curator().getChildren().forPath(share);
        proxy.dropConnections();
        proxy.restore();
        await().atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(5))
                .until(() -> !leader.curator().getZookeeperClient().isConnected());
        // same session again (well within T), through the slowed link: the re-read takes seconds
        await().atMost(Duration.ofSeconds(20))
                .until(() -> leader.curator().getZookeeperClient().isConnected());
        assertThat(leader.isLeader()).as("same session, same term").isTrue();

        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(M, pids));
        proxy.delay(Duration.ZERO);
        cluster.assertNoDoubleLogin();
        assertThat(second.held())
                .as("the lost ADDINGs %s, held where they landed", landed)
                .containsAll(landed);
        assertThat(first.events())
                .as("the first instance got none of the lost ADDINGs back after the cut")
                .noneMatch(e -> e.kind().equals("ASSIGNED") && landed.contains(e.pid()) && e.nanos() > cut);
    }

    /**
     * The core planner, except that a PID it adds again goes to another live instance than the last
     * time it was added (the planner would send it back to the same one, whose create would then
     * fail on the node the lost write left).
     */
    static final class Wandering implements PlacementPolicy {
        private final PlacementPolicy planner;
        private final Map<String, InstanceId> lastAdded = new HashMap<>();

        Wandering(PlacementPolicy planner) {
            this.planner = planner;
        }

        @Override
        public Plan plan(ClusterSnapshot cluster, long nowNanos) {
            Plan planned = planner.plan(cluster, nowNanos);
            List<PlanStep> steps = new ArrayList<>();
            for (PlanStep step : planned.steps()) {
                if (step instanceof PlanStep.Add add && add.instance().id().equals(lastAdded.get(add.pid()))) {
                    step = elsewhere(cluster, add);
                }
                if (step instanceof PlanStep.Add add) {
                    lastAdded.put(add.pid(), add.instance().id());
                }
                steps.add(step);
            }
            return new Plan(steps, planned.signals(), planned.nextState());
        }

        private static PlanStep.Add elsewhere(ClusterSnapshot cluster, PlanStep.Add add) {
            ModuleSnapshot module = cluster.byKey().get(add.module());
            if (module != null) {
                for (LiveInstance other : module.live()) {
                    if (!other.id().equals(add.instance().id())) {
                        return new PlanStep.Add(add.module(), other.ref(), add.pid());
                    }
                }
            }
            return add;
        }
    }
}
