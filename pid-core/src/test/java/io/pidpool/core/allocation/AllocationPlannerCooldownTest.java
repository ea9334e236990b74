package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.testing.ManualTicker;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Cooldowns (a reported login failure or conflict): the planner sees a cooling PID as unassignable. */
class AllocationPlannerCooldownTest {
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Duration LONGEST = Duration.ofMinutes(2);
    private static final Duration COOLDOWN = Duration.ofMinutes(10);
    private static final PlannerPolicy POLICY = PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ofMinutes(1));

    private final ClusterSimulator sim = new ClusterSimulator(POLICY);

    private ModuleKey settled(int servers, int pids, int instances) {
        ModuleKey module = sim.module("m", servers);
        sim.addPids(module, pids);
        for (int i = 0; i < instances; i++) {
            sim.join(module);
        }
        sim.quiesce(LONGEST, 10);
        sim.assertBalancedAndComplete();
        return module;
    }

    private static boolean adds(Plan plan, String pid) {
        return plan.adds().stream().anyMatch(a -> a.pid().equals(pid));
    }

    @Test
    void aHeldPidThatCoolsDownIsWithdrawnGivenToNobodyUntilTheEndAndThenHandedOutAgain() {
        ModuleKey module = settled(2, 6, 2);
        InstanceRef holder = sim.liveIn(module).get(0).ref;
        String pid = sim.instance(holder).held().iterator().next();
        sim.coolDown(pid, COOLDOWN);
        long end = sim.cooldowns.get(pid);

        Plan first = sim.step();
        assertThat(first.steps()).containsExactly(new PlanStep.Delete(module, holder, pid, DeleteReason.UNWANTED));
        assertThat(first.signals(PlanSignal.CoolingDown.class))
                .containsExactly(new PlanSignal.CoolingDown(module, Set.of(pid), end));

        // acknowledged, then the whole cooldown minus one nanosecond: nobody gets it, whoever is short
        sim.ackAll();
        for (int minute = 0; minute < 10; minute++) {
            Plan plan = sim.step();
            assertThat(adds(plan, pid)).as("minute %d", minute).isFalse();
            assertThat(sim.holders(pid)).isEmpty();
            sim.ackAll();
            sim.advance(Duration.ofMinutes(1).minusNanos(minute == 9 ? 1 : 0));
        }
        assertThat(sim.now).isEqualTo(end - 1);
        assertThat(adds(sim.step(), pid)).isFalse();

        sim.advance(Duration.ofNanos(1)); // the end itself: assignable again
        Plan after = sim.step();
        assertThat(after.adds()).extracting(PlanStep::pid).containsExactly(pid);
        assertThat(after.signals(PlanSignal.CoolingDown.class)).isEmpty();
        sim.ackAll();
        sim.assertBalancedAndComplete();
    }

    @Test
    void aNewPidInCooldownIsNotHandedOutAndTheRestStayBalanced() {
        ModuleKey module = settled(3, 9, 3);
        String fresh = sim.addPids(module, 1).get(0);
        sim.coolDown(fresh, COOLDOWN);
        Plan plan = sim.step();
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.signals(PlanSignal.CoolingDown.class)).hasSize(1);
        sim.advance(COOLDOWN);
        assertThat(sim.step().adds()).extracting(PlanStep::pid).containsExactly(fresh);
    }

    @Test
    void theCooldownMapIsReadWithTheCallersClockOnly() {
        // the same snapshot planned at two times: the planner reads no clock of its own
        ManualTicker ticker = new ManualTicker();
        ticker.advance(Duration.ofHours(1));
        ModuleKey key = ModuleKey.parse("d#m#s");
        var instance = new LiveInstance(io.pidpool.core.model.InstanceId.of("i1"), 0x10, 1, 1, Map.of());
        var snapshot = ClusterSnapshot.of(new ModuleSnapshot(
                ModuleConfig.of(key, 1),
                Set.of("a", "b"),
                List.of(instance),
                List.of(),
                Map.of("a", ticker.read() + COOLDOWN.toNanos())));
        AllocationPlanner planner = new AllocationPlanner(POLICY);

        Plan during = planner.plan(snapshot, PlannerState.EMPTY, ticker.read());
        assertThat(during.adds()).extracting(PlanStep::pid).containsExactly("b");

        ticker.advance(COOLDOWN);
        Plan after = planner.plan(snapshot, PlannerState.EMPTY, ticker.read());
        assertThat(after.adds()).extracting(PlanStep::pid).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void cooldownsOfPidsTheModuleDoesNotWantChangeNothing() {
        ModuleKey module = settled(2, 4, 2);
        sim.coolDown("unknown", COOLDOWN);
        Plan plan = sim.step();
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.signals(PlanSignal.CoolingDown.class)).isEmpty();
        assertThat(sim.counts(module).values()).containsExactly(2, 2);
    }

    @Test
    void aNullEntryIsRefused() {
        Map<String, Long> broken = new HashMap<>();
        broken.put("a", null);
        assertThatThrownBy(() -> new ModuleSnapshot(
                        ModuleConfig.of(ModuleKey.parse("d#m#s"), 1), Set.of("a"), List.of(), List.of(), broken))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("cooldowns");
    }
}
