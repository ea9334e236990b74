package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.ModuleKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Clients whose sessions were all lost at once (a ZooKeeper outage) come back, each naming the
 * instance it was: every one gets back exactly the PIDs it held, and only after the grace counted
 * from its departure (the simulator fails on any add that a departed holder still claims).
 */
class ReturningInstancesTest {
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Duration DELAY = Duration.ofSeconds(60);
    private static final PlannerPolicy POLICY =
            PlannerPolicy.defaults(GRACE).withRebalanceDelay(DELAY).withBrake(0.5, Duration.ofSeconds(120));

    private final ClusterSimulator sim = new ClusterSimulator(POLICY);

    /** 44 PIDs on 4 settled instances; returns each instance's PIDs. */
    private Map<InstanceRef, Set<String>> settled(ModuleKey module) {
        sim.addPids(module, 44);
        for (int i = 0; i < 4; i++) {
            sim.join(module);
        }
        sim.quiesce(Duration.ofMinutes(5), 10);
        sim.assertBalancedAndComplete();
        Map<InstanceRef, Set<String>> held = new HashMap<>();
        sim.liveIn(module).forEach(i -> held.put(i.ref, i.held()));
        return held;
    }

    /** Every session lost; the processes come back in the opposite order, naming their old instances. */
    private Map<InstanceRef, InstanceRef> allExpireAndReturn(ModuleKey module, Map<InstanceRef, Set<String>> before) {
        List<InstanceRef> old = new ArrayList<>(before.keySet());
        old.sort(null);
        old.forEach(sim::crash);
        sim.advance(Duration.ofSeconds(1));
        sim.step(); // the leader sees them gone: nobody is live
        Map<InstanceRef, InstanceRef> successor = new HashMap<>();
        for (int i = old.size() - 1; i >= 0; i--) {
            successor.put(old.get(i), sim.rejoin(module, old.get(i)));
        }
        return successor;
    }

    /** Plans until at rest without ever letting the rebalance delay pass in one step. */
    private void settleWithinTheDelay() {
        for (int round = 0; round < 10; round++) {
            sim.ackAll();
            sim.advance(GRACE.plusSeconds(1));
            sim.step();
        }
        sim.assertBalancedAndComplete();
    }

    private static int moved(
            Map<InstanceRef, Set<String>> before, Map<InstanceRef, InstanceRef> successor, ClusterSimulator sim) {
        int moved = 0;
        for (var e : before.entrySet()) {
            Set<String> now = sim.instance(successor.get(e.getKey())).held();
            for (String pid : e.getValue()) {
                if (!now.contains(pid)) {
                    moved++;
                }
            }
        }
        return moved;
    }

    @Test
    void everyReturningProcessGetsBackExactlyWhatItHeld() {
        ModuleKey module = sim.module("m", 4);
        Map<InstanceRef, Set<String>> before = settled(module);
        Map<InstanceRef, InstanceRef> successor = allExpireAndReturn(module, before);

        Plan first = sim.step();
        assertThat(first.adds()).as("nothing is added within the grace").isEmpty();
        settleWithinTheDelay();

        assertThat(moved(before, successor, sim)).as("PIDs that changed holder").isZero();
        before.forEach(
                (old, pids) -> assertThat(sim.instance(successor.get(old)).held())
                        .as("%s's successor", old)
                        .isEqualTo(pids));
    }

    @Test
    void alsoWhenTheLeaderLostItsMemoryDuringTheOutage() {
        ModuleKey module = sim.module("m", 4);
        Map<InstanceRef, Set<String>> before = settled(module);
        Map<InstanceRef, InstanceRef> successor = allExpireAndReturn(module, before);
        sim.state = PlannerState.EMPTY; // a new leader: its slots come from the departed instances alone

        settleWithinTheDelay();

        assertThat(moved(before, successor, sim)).as("PIDs that changed holder").isZero();
    }

    @Test
    void aDeferredAddOfTheirOwnPidsDoesNotSendThemElsewhere() {
        ModuleKey module = sim.module("m", 4);
        Map<InstanceRef, Set<String>> before = settled(module);
        Map<InstanceRef, InstanceRef> successor = allExpireAndReturn(module, before);
        sim.step();
        sim.advance(GRACE.plusSeconds(1));
        sim.dropAddsOnce = true; // the grace is over: releases and adds, but the adds wait (as a leader may)
        Plan deferred = sim.step();
        assertThat(deferred.adds()).isNotEmpty();

        settleWithinTheDelay();

        assertThat(moved(before, successor, sim)).as("PIDs that changed holder").isZero();
    }

    @Test
    void aNamedInstanceThatIsStillLiveIsIgnoredAndTheJoinerIsPlacedAsUsual() {
        ModuleKey module = sim.module("m", 4);
        Map<InstanceRef, Set<String>> before = settled(module);
        InstanceRef someone = before.keySet().iterator().next();
        sim.rejoin(module, someone); // names a live instance: no vacancy to give, a scale-out as usual

        settleWithinTheDelay();

        assertThat(sim.instance(someone).held()).hasSizeBetween(8, 9);
    }
}
