package io.pidpool.server.leader;

import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.Plan;

/**
 * Decides who holds which PID: the leader supplies its view as the core planner's
 * {@link ClusterSnapshot} and the time, the policy returns a {@link Plan} whose steps the leader
 * applies in order and whose signals it turns into alerts ({@link PlanSignals}). The production
 * implementation is {@link PlannerPlacement} (the core allocation planner); tests may plug in
 * others. The leader re-checks every add against its own view before writing it (defence in depth),
 * so a policy bug can delay an assignment but cannot double-assign a PID.
 *
 * <p>The leader ignores {@link Plan#nextState()}: what a policy carries from one call to the next
 * stays inside it.
 *
 * <p>Concurrency: called only from the leader's serial executor; one instance per leadership term,
 * so an implementation may carry state from one call to the next.
 */
@FunctionalInterface
public interface PlacementPolicy {
    /**
     * Plans every module at once (a PID migrating between modules must be let go before it is added).
     *
     * @param cluster per module: the desired PIDs (database: ACTIVE or COOLDOWN, this module, not
     *     backing off after a failed ADDING), the live and departed instances, the cooldowns
     * @param nowNanos the leader's monotonic time
     */
    Plan plan(ClusterSnapshot cluster, long nowNanos);
}
