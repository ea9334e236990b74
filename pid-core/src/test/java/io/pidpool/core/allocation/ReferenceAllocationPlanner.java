package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The planner as session 2 left it (HashMap of entry objects, claim objects), kept unchanged in test
 * scope so that {@code AllocationPlannerProperties} can check that {@link AllocationPlanner} plans
 * exactly the same. Not maintained: if the planner's behaviour is changed on purpose, delete this
 * copy and the property that compares with it.
 */
final class ReferenceAllocationPlanner {
    private final PlannerPolicy policy;

    public ReferenceAllocationPlanner(PlannerPolicy policy) {
        this.policy = requireNonNull(policy, "policy");
    }

    public PlannerPolicy policy() {
        return policy;
    }

    /**
     * Plans every module of {@code snapshot}.
     *
     * @param state what the previous plan returned in {@link Plan#nextState()}, or
     *     {@link PlannerState#EMPTY}
     * @param nowNanos the leader's monotonic time ({@link io.pidpool.core.port.Ticker#read()}); every
     *     {@link DepartedInstance#departedAtNanos()} must be at or before it
     */
    public Plan plan(ClusterSnapshot snapshot, PlannerState state, long nowNanos) {
        requireNonNull(snapshot, "snapshot");
        requireNonNull(state, "state");
        for (ModuleSnapshot module : snapshot.modules()) {
            for (DepartedInstance instance : module.departed()) {
                requireArgument(
                        nowNanos - instance.departedAtNanos() >= 0,
                        "departedAtNanos",
                        "%s of %s departed at %d, after now (%d)",
                        instance.ref(),
                        module.key(),
                        instance.departedAtNanos(),
                        nowNanos);
            }
        }
        List<PlanSignal> cooling = new ArrayList<>();
        snapshot = withoutCooldowns(snapshot, nowNanos, cooling);
        ReferencePidIndex index =
                ReferencePidIndex.build(snapshot, nowNanos, policy.grace().toNanos());
        List<PlanStep> deletes = new ArrayList<>();
        List<PlanStep> releases = new ArrayList<>();
        List<PlanStep> adds = new ArrayList<>();
        List<PlanSignal> signals = new ArrayList<>(cooling);
        var next = new HashMap<ModuleKey, ModuleState>();
        int budget = policy.maxMovesPerPlan();
        List<ModuleSnapshot> modules = snapshot.modules();
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            var planner = new ReferenceModulePlanner(module, m, state.module(module.key()), index, policy, nowNanos);
            budget -= planner.plan(budget);
            deletes.addAll(planner.deletes);
            releases.addAll(planner.releases);
            adds.addAll(planner.adds);
            signals.addAll(planner.signals);
            next.put(module.key(), planner.nextState);
        }
        List<PlanStep> steps = new ArrayList<>(deletes.size() + releases.size() + adds.size());
        steps.addAll(deletes);
        steps.addAll(releases);
        steps.addAll(adds);
        return new Plan(steps, signals, new PlannerState(next));
    }

    /**
     * Cooldowns: a desired PID in cooldown is planned exactly as a PID the module does not want (so it
     * is added nowhere and deleted, reason {@link DeleteReason#UNWANTED}, where it is held); each
     * module with such PIDs gets a {@link PlanSignal.CoolingDown}.
     */
    private static ClusterSnapshot withoutCooldowns(ClusterSnapshot snapshot, long nowNanos, List<PlanSignal> out) {
        List<ModuleSnapshot> modules = new ArrayList<>(snapshot.modules().size());
        boolean changed = false;
        for (ModuleSnapshot module : snapshot.modules()) {
            ModuleSnapshot assignable = assignableAt(module, nowNanos);
            if (assignable != module) {
                changed = true;
                var cooling = new java.util.TreeSet<String>();
                long nextEnd = 0;
                for (String pid : module.desiredPids()) {
                    if (module.coolingDown(pid, nowNanos)) {
                        long end = module.cooldowns().get(pid);
                        nextEnd = cooling.isEmpty() || end - nextEnd < 0 ? end : nextEnd;
                        cooling.add(pid);
                    }
                }
                if (!cooling.isEmpty()) {
                    out.add(new PlanSignal.CoolingDown(module.key(), cooling, nextEnd));
                }
            }
            modules.add(assignable);
        }
        return changed ? new ClusterSnapshot(modules) : snapshot;
    }

    private static ModuleSnapshot assignableAt(ModuleSnapshot module, long nowNanos) {
        if (module.cooldowns().isEmpty()) {
            return module;
        }
        Set<String> assignable = new java.util.LinkedHashSet<>();
        for (String pid : module.desiredPids()) {
            if (!module.coolingDown(pid, nowNanos)) {
                assignable.add(pid);
            }
        }
        return new ModuleSnapshot(module.config(), assignable, module.live(), module.departed(), Map.of());
    }
}
