package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;

/**
 * Decides which instance holds which PID. The leader calls it whenever its view changes (and on a
 * schedule, because watches can miss events), applies the returned {@link Plan}, and stores
 * {@link Plan#nextState()} for the next call.
 *
 * <h2>Contract</h2>
 *
 * <p>For a {@link ClusterSnapshot}, the {@link PlannerState} of the previous plan and the leader's
 * monotonic time, the planner returns instructions in the order they must be applied (deletes,
 * releases, adds) and promises:
 *
 * <ul>
 *   <li><b>Exclusivity.</b> It never adds a PID while any instance, in any module, may hold it: a
 *       live instance in any state but DELETED (an unacknowledged DELETING included), or a departed
 *       instance within {@link PlannerPolicy#grace()} that did not release it. Such a PID is
 *       reported in {@link PlanSignal.AwaitingRelease} and added by a later plan.
 *   <li><b>Balance.</b> Once a plan is applied and acknowledged, the live instances of a module
 *       hold counts proportional to their weights, rounded by largest remainder (equal weights:
 *       within 1 of each other), except for the shares of vacant slots still reserved for a
 *       replacement, and while the throttle or the brake holds moves back.
 *   <li><b>Minimal movement.</b> Only instances above their target give PIDs away, and targets are
 *       rounded towards the instances that already hold more, so a join, a leave or a server-count
 *       change moves the theoretical minimum; new PIDs go only to instances below target; PIDs the
 *       module no longer wants are deleted where they are.
 *   <li><b>Slots.</b> A module's PIDs are pre-split into {@link io.pidpool.core.model.ModuleConfig#servers()}
 *       slot shares even before instances exist; a joining instance takes a vacant slot and its
 *       whole reserved share; a departed instance's slot keeps its share for
 *       {@link PlannerPolicy#rebalanceDelay()} before the share is spread over the live instances;
 *       instances beyond the slot count scale the module out.
 *   <li><b>Level-triggered.</b> Planning again on the state a plan produced, once acknowledged,
 *       yields no steps. Unwanted PIDs are deleted, a PID written to two instances keeps one.
 *   <li><b>Cooldowns.</b> A desired PID whose {@link ModuleSnapshot#cooldowns() cooldown} has not
 *       ended at {@code nowNanos} is treated as not desired: never added, deleted where it is held,
 *       reported in {@link PlanSignal.CoolingDown}. The planner reads no clock: the cooldown ends
 *       when the caller passes a {@code nowNanos} at or after its end.
 *   <li><b>Brakes.</b> At most {@link PlannerPolicy#maxMovesPerModule()} and
 *       {@link PlannerPolicy#maxMovesPerPlan()} rebalancing moves start per plan; when more than
 *       {@link PlannerPolicy#brakeShare()} of a module's instances failed within
 *       {@link PlannerPolicy#brakeWindow()}, nothing is redistributed there and the plan says so.
 *       A failure is a departure that may still hold a PID it did not release (a graceful leave
 *       released everything and does not count); modules smaller than
 *       {@link PlannerPolicy#BRAKE_MIN_INSTANCES} are never braked.
 * </ul>
 *
 * <p>Losing the state is safe (see {@link PlannerState}). Bad input (a PID desired by two modules,
 * a departure in the future; duplicate instances already when the snapshot is built) is rejected with a
 * {@link io.pidpool.core.error.PidPoolException} before anything is decided.
 *
 * <p>Concurrency: pure and stateless. No I/O, no clock reads, no threads; the instance holds only
 * its immutable policy, so one planner may be shared by any number of threads. Planning costs
 * O(PIDs + instances log instances) time.
 */
public final class AllocationPlanner {
    private final PlannerPolicy policy;

    public AllocationPlanner(PlannerPolicy policy) {
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
        PidIndex index = PidIndex.build(snapshot, nowNanos, policy.grace().toNanos());
        List<PlanStep> deletes = new ArrayList<>();
        List<PlanStep> releases = new ArrayList<>();
        List<PlanStep> adds = new ArrayList<>();
        List<PlanSignal> signals = new ArrayList<>(cooling);
        var next = new HashMap<ModuleKey, ModuleState>();
        int budget = policy.maxMovesPerPlan();
        List<ModuleSnapshot> modules = snapshot.modules();
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            var planner = new ModulePlanner(module, m, state.module(module.key()), index, policy, nowNanos);
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
            ModuleSnapshot assignable = module.assignableAt(nowNanos);
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
}
