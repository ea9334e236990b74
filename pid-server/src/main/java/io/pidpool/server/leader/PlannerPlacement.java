package io.pidpool.server.leader;

import io.pidpool.core.allocation.AllocationPlanner;
import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.Plan;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.allocation.PlannerState;

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
    public Plan plan(ClusterSnapshot cluster, long nowNanos) {
        Plan plan = planner.plan(cluster, state, nowNanos);
        state = plan.nextState();
        return plan;
    }
}
