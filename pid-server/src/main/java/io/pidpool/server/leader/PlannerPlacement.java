package io.pidpool.server.leader;

import io.pidpool.core.allocation.AllocationPlanner;
import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.DepartedInstance;
import io.pidpool.core.allocation.LiveInstance;
import io.pidpool.core.allocation.ModuleSnapshot;
import io.pidpool.core.allocation.Plan;
import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.allocation.PlanStep;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.allocation.PlannerState;
import java.util.ArrayList;
import java.util.List;

/**
 * The production {@link PlacementPolicy}: the core {@link AllocationPlanner} (slots, grace,
 * replacement reservations, throttle, mass-failure brake), with its carried {@link PlannerState}
 * kept from one call to the next. One instance per leadership term: a new leader starts from
 * {@link PlannerState#EMPTY}, which the planner is built to tolerate.
 *
 * <p>Concurrency: not thread-safe; called only from the leader's serial executor.
 */
public final class PlannerPlacement implements PlacementPolicy {
    private final AllocationPlanner planner;
    private PlannerState state = PlannerState.EMPTY;

    public PlannerPlacement(PlannerPolicy policy) {
        this.planner = new AllocationPlanner(policy);
    }

    @Override
    public Placement plan(List<ModuleInput> modules, long nowNanos) {
        List<ModuleSnapshot> snapshots = new ArrayList<>(modules.size());
        for (ModuleInput module : modules) {
            List<LiveInstance> live = module.live().stream()
                    .map(i -> new LiveInstance(
                            i.id(), i.sessionId(), i.weight(), i.registrationOrder(), i.pids(), i.previous()))
                    .toList();
            List<DepartedInstance> departed = module.departed().stream()
                    .map(d -> new DepartedInstance(d.id(), d.sessionId(), d.departedAtNanos(), d.pids(), d.released()))
                    .toList();
            snapshots.add(new ModuleSnapshot(module.config(), module.desired(), live, departed, module.cooldowns()));
        }
        Plan plan = planner.plan(new ClusterSnapshot(snapshots), state, nowNanos);
        state = plan.nextState();
        List<Step> steps = new ArrayList<>(plan.steps().size());
        for (PlanStep step : plan.steps()) {
            if (step instanceof PlanStep.Delete delete) {
                steps.add(new Revoke(
                        delete.module(),
                        delete.instance().id(),
                        delete.instance().sessionId(),
                        delete.pid(),
                        delete.reason().isMove()));
            } else if (step instanceof PlanStep.Release release) {
                steps.add(new Release(
                        release.module(),
                        release.instance().id(),
                        release.instance().sessionId(),
                        release.removePidsNode()));
            } else if (step instanceof PlanStep.Add add) {
                steps.add(new Add(
                        add.module(), add.instance().id(), add.instance().sessionId(), add.pid()));
            }
        }
        List<Signal> signals = new ArrayList<>();
        for (PlanSignal signal : plan.signals()) {
            signals.add(describe(signal));
        }
        return new Placement(steps, signals);
    }

    private static Signal describe(PlanSignal signal) {
        if (signal instanceof PlanSignal.BrakeEngaged brake) {
            return Signal.alert(
                    "brake:" + brake.module(),
                    "ALERT mass-failure brake engaged in " + brake.module() + ": " + brake.vanished() + " of "
                            + brake.instances() + " instances vanished; not redistributing (maintenance mode)");
        } else if (signal instanceof PlanSignal.Throttled throttled) {
            return Signal.alert(
                    "throttled:" + throttled.module(),
                    "move throttle held back " + throttled.deferredMoves() + " moves in " + throttled.module());
        } else if (signal instanceof PlanSignal.Unassignable none) {
            return Signal.alert(
                    "unassignable:" + none.module(),
                    none.module() + ": " + none.pids().size() + " PIDs have no live instance to go to");
        } else if (signal instanceof PlanSignal.CoolingDown cooling) {
            return Signal.info(cooling.module() + ": " + cooling.pids().size() + " PIDs in cooldown");
        } else if (signal instanceof PlanSignal.AwaitingRelease waiting) {
            return Signal.info(waiting.module() + ": " + waiting.pids().size() + " PIDs await release");
        } else if (signal instanceof PlanSignal.VacancyReserved vacancy) {
            return Signal.info(vacancy.module() + ": slot " + vacancy.slot() + " keeps " + vacancy.reservedPids()
                    + " PIDs for a replacement");
        }
        return Signal.info(String.valueOf(signal));
    }
}
