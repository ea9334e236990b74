package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.List;

/**
 * The outcome of {@link AllocationPlanner#plan}: instructions in the order they must be applied,
 * signals, and the state to pass to the next call.
 *
 * @param steps every {@link PlanStep.Delete}, then every {@link PlanStep.Release}, then every
 *     {@link PlanStep.Add}; modules in key order, within a module instances in registration order
 * @param signals brakes, throttles, PIDs waiting for a holder to let go, PIDs nobody can take,
 *     reserved vacancies
 * @param nextState what the caller stores and passes to the next plan
 */
public record Plan(List<PlanStep> steps, List<PlanSignal> signals, PlannerState nextState) {
    public Plan {
        steps = List.copyOf(requireNonNull(steps, "steps"));
        signals = List.copyOf(requireNonNull(signals, "signals"));
        requireNonNull(nextState, "nextState");
    }

    /** No instruction: the cluster already is where the planner wants it (signals may remain). */
    public boolean isEmpty() {
        return steps.isEmpty();
    }

    public List<PlanStep.Delete> deletes() {
        return stepsOf(PlanStep.Delete.class);
    }

    public List<PlanStep.Release> releases() {
        return stepsOf(PlanStep.Release.class);
    }

    public List<PlanStep.Add> adds() {
        return stepsOf(PlanStep.Add.class);
    }

    /** Rebalancing deletes only: the moves this plan starts. */
    public long moves() {
        return deletes().stream().filter(d -> d.reason().isMove()).count();
    }

    public <T extends PlanSignal> List<T> signals(Class<T> type) {
        return signals.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private <T extends PlanStep> List<T> stepsOf(Class<T> type) {
        return steps.stream().filter(type::isInstance).map(type::cast).toList();
    }
}
