package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A module's own rebalance delay ({@code pool_module.rebalance_delay_ms}, set with {@code PUT
 * /api/v1/modules/{module}}) against the real leader, ZooKeeper and database: a departed instance's
 * PIDs go to the survivors after the module's delay, while a module without one keeps waiting for
 * the server's (much longer) default.
 */
class ModuleRebalanceDelayIT {
    static final ModuleKey QUICK = ModuleKey.parse("fin#risk#quick");
    static final ModuleKey USUAL = ModuleKey.parse("fin#risk#usual");
    static final Duration OWN = Duration.ofSeconds(4);
    static final Duration DEFAULT = Duration.ofMinutes(10);

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void aDepartedInstancesPidsMoveAfterTheModulesDelayNotTheServersDefault() {
        List<String> quick = cluster.addPids(QUICK, 3, "q", 30);
        List<String> usual = cluster.addPids(USUAL, 3, "u", 30);
        cluster.repositories
                .modules()
                .put(cluster.repositories.modules().find(QUICK).orElseThrow().withRebalanceDelay(OWN));
        cluster.startNode(
                "s1",
                b -> b.settings(
                        TestCluster.settings().withGrace(Duration.ofSeconds(1)).withRebalanceDelay(DEFAULT)));
        List<SimulatedInstance> quickOnes =
                List.of(cluster.startInstance(QUICK), cluster.startInstance(QUICK), cluster.startInstance(QUICK));
        List<SimulatedInstance> usualOnes =
                List.of(cluster.startInstance(USUAL), cluster.startInstance(USUAL), cluster.startInstance(USUAL));
        await().atMost(Duration.ofSeconds(40))
                .until(() -> cluster.settled(QUICK, quick) && cluster.settled(USUAL, usual));
        Set<String> quickOrphans = quickOnes.get(0).held();
        Set<String> usualOrphans = usualOnes.get(0).held();
        assertThat(quickOrphans).hasSize(10);

        long departedAt = System.nanoTime();
        for (SimulatedInstance victim : List.of(quickOnes.get(0), usualOnes.get(0))) {
            victim.crash();
            cluster.remove(victim);
        }
        await().atMost(Duration.ofSeconds(40))
                .until(() -> heldBy(quickOnes.subList(1, 3)).containsAll(quickOrphans));
        for (SimulatedInstance survivor : quickOnes.subList(1, 3)) {
            for (SimulatedInstance.Event event : survivor.events()) {
                if (event.kind().equals("ASSIGNED") && quickOrphans.contains(event.pid())) {
                    assertThat(Duration.ofNanos(event.nanos() - departedAt))
                            .as("%s taken up by %s only after the module's delay", event.pid(), survivor.id())
                            .isGreaterThanOrEqualTo(OWN);
                }
            }
        }
        // the other module waits for the server's default: its orphans stay unassigned meanwhile
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> {
            Set<String> held = heldBy(usualOnes.subList(1, 3));
            return usualOrphans.stream().noneMatch(held::contains);
        });
        cluster.assertNoDoubleLogin();
    }

    private static Set<String> heldBy(List<SimulatedInstance> instances) {
        Set<String> held = new java.util.HashSet<>();
        instances.forEach(i -> held.addAll(i.held()));
        return held;
    }
}
