package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Plans the target scale once (100,000 PIDs over 1,000 instances, in one module and spread over 20
 * modules) so the code paths run at that size in every build. No timing assertion here: timing
 * belongs in a warmed-up benchmark, not in a shared-CPU unit test.
 */
class AllocationPlannerScaleTest {
    static final long NOW = 1_000_000_000_000L;
    static final AllocationPlanner PLANNER = new AllocationPlanner(PlannerPolicy.defaults(Duration.ofSeconds(10))
            .withMoveLimits(100_000, 100_000)
            .withRebalanceDelay(Duration.ZERO));

    /**
     * {@code modules} modules sharing {@code pids} PIDs and {@code instances} instances evenly, every
     * instance holding its even share (ADDED), plus one extra instance joining the first module.
     */
    static ClusterSnapshot settledPlusOneJoiner(int modules, int pids, int instances) {
        List<ModuleSnapshot> snapshots = new ArrayList<>();
        int pidsPerModule = pids / modules;
        int instancesPerModule = instances / modules;
        int pid = 0;
        long order = 0;
        for (int m = 0; m < modules; m++) {
            ModuleKey key = ModuleKey.parse("dept#mod" + m + "#sys");
            var desired = new LinkedHashSet<String>(pidsPerModule * 2);
            List<LiveInstance> live = new ArrayList<>(instancesPerModule + 1);
            int perInstance = pidsPerModule / instancesPerModule;
            for (int i = 0; i < instancesPerModule; i++) {
                var held = new HashMap<String, PidState>(perInstance * 2);
                for (int k = 0; k < perInstance; k++) {
                    String id = "pid-" + pid++;
                    desired.add(id);
                    held.put(id, PidState.ADDED);
                }
                live.add(new LiveInstance(InstanceId.of("m" + m + "-i" + i), order, 1, order++, held));
            }
            if (m == 0) {
                live.add(new LiveInstance(InstanceId.of("m0-joiner"), order, 1, order++, Collections.emptyMap()));
            }
            snapshots.add(new ModuleSnapshot(
                    ModuleConfig.of(key, Math.min(instancesPerModule, ModuleConfig.MAX_SERVERS)),
                    desired,
                    live,
                    List.of()));
        }
        return new ClusterSnapshot(snapshots);
    }

    @Test
    void oneHundredThousandPidsOverOneThousandInstancesInOneModule() {
        ClusterSnapshot snapshot = settledPlusOneJoiner(1, 100_000, 1_000);
        Plan plan = PLANNER.plan(snapshot, PlannerState.EMPTY, NOW);

        // 100,000 over 1,001: floor 99, 901 get 100; 1,000 instances hold 100, 99 of them must give one
        List<Integer> counts = new ArrayList<>(Collections.nCopies(1_000, 100));
        counts.add(0);
        assertThat(Theory.minimumMoves(counts, 100_000)).isEqualTo(99);
        assertThat(plan.moves()).isEqualTo(99);
        assertThat(plan.adds()).isEmpty();
        assertThat(plan.nextState().module(snapshot.modules().get(0).key()).slots())
                .hasSize(1_001);

        // the same again once the moves are acknowledged: the joiner gets exactly those 99
        Plan again = PLANNER.plan(acknowledged(snapshot, plan), plan.nextState(), NOW + 1);
        assertThat(again.adds())
                .hasSize(99)
                .allMatch(a -> a.instance().id().value().equals("m0-joiner"));
        assertThat(again.deletes()).isEmpty();
    }

    @Test
    void oneHundredThousandPidsOverOneThousandInstancesInTwentyModules() {
        ClusterSnapshot snapshot = settledPlusOneJoiner(20, 100_000, 1_000);
        Plan plan = PLANNER.plan(snapshot, PlannerState.EMPTY, NOW);
        // module 0: 5,000 over 51 = 98 r 2; 50 hold 100, so 50 * 2 - 2 = 98 move; the rest is settled
        assertThat(plan.moves()).isEqualTo(98);
        assertThat(plan.deletes())
                .allMatch(d -> d.module().equals(snapshot.modules().get(0).key()));
        assertThat(plan.nextState().modules()).hasSize(20);
    }

    /** The snapshot after every DELETING of {@code plan} was answered and its node removed. */
    static ClusterSnapshot acknowledged(ClusterSnapshot snapshot, Plan plan) {
        var gone = new HashMap<InstanceRef, List<String>>();
        plan.deletes().forEach(d -> gone.computeIfAbsent(d.instance(), k -> new ArrayList<>())
                .add(d.pid()));
        List<ModuleSnapshot> modules = new ArrayList<>();
        for (ModuleSnapshot module : snapshot.modules()) {
            List<LiveInstance> live = new ArrayList<>();
            for (LiveInstance instance : module.live()) {
                List<String> removed = gone.get(instance.ref());
                if (removed == null) {
                    live.add(instance);
                } else {
                    Map<String, PidState> pids = new HashMap<>(instance.pids());
                    removed.forEach(pids::remove);
                    live.add(new LiveInstance(
                            instance.id(),
                            instance.sessionId(),
                            instance.weight(),
                            instance.registrationOrder(),
                            pids));
                }
            }
            modules.add(new ModuleSnapshot(module.config(), module.desiredPids(), live, module.departed()));
        }
        return new ClusterSnapshot(modules);
    }
}
