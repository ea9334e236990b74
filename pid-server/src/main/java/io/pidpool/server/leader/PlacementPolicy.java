package io.pidpool.server.leader;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Decides who holds which PID: the leader supplies views and times, the policy returns ordered steps.
 * The production implementation is {@link PlannerPlacement} (the core allocation planner); tests
 * may plug in others. The leader re-checks every Add against its own view before writing it (defence in
 * depth), so a policy bug can delay an assignment but cannot double-assign a PID.
 *
 * <p>Concurrency: called only from the leader's serial executor; one instance per leadership term,
 * so an implementation may carry state from one call to the next.
 */
public interface PlacementPolicy {
    /** Plans every module at once (a PID migrating between modules must be let go before it is added). */
    Placement plan(List<ModuleInput> modules, long nowNanos);

    /**
     * @param desired the module's PIDs (database: ACTIVE or COOLDOWN, this module, not backing off
     *     after a failed ADDING)
     * @param cooldowns PIDs in cooldown with the (monotonic) time it ends: desired, but to be handed
     *     to nobody and withdrawn from their holder until then
     */
    record ModuleInput(
            ModuleConfig config,
            Set<String> desired,
            List<LiveInput> live,
            List<DepartedInput> departed,
            Map<String, Long> cooldowns) {
        public ModuleInput {
            cooldowns = cooldowns == null ? Map.of() : Map.copyOf(cooldowns);
        }

        /** A module without cooldowns. */
        public ModuleInput(
                ModuleConfig config, Set<String> desired, List<LiveInput> live, List<DepartedInput> departed) {
            this(config, desired, live, departed, Map.of());
        }

        public ModuleKey key() {
            return config.key();
        }
    }

    /**
     * @param registrationOrder the ephemeral node's czxid: older instances win ties
     * @param pids PID nodes of this instance (this session) with their states
     * @param previous the instance the same process registered as before its session was lost (its
     *     instance node says so); {@code null}: none
     */
    record LiveInput(
            InstanceId id,
            long sessionId,
            int weight,
            long registrationOrder,
            Map<String, PidState> pids,
            InstanceId previous) {
        /** An instance that names no previous instance. */
        LiveInput(InstanceId id, long sessionId, int weight, long registrationOrder, Map<String, PidState> pids) {
            this(id, sessionId, weight, registrationOrder, pids, null);
        }
    }

    /**
     * @param departedAtNanos when the leader saw the ephemeral node go (leader's monotonic clock)
     * @param released PIDs acknowledged DELETED: free without grace
     */
    record DepartedInput(
            InstanceId id, long sessionId, long departedAtNanos, Map<String, PidState> pids, Set<String> released) {}

    /** One instruction; apply in order: revokes, releases, adds. */
    sealed interface Step {
        ModuleKey module();

        InstanceId instance();
    }

    /** Write DELETING; {@code move} when the PID is to go to another instance (throttled). */
    record Revoke(ModuleKey module, InstanceId instance, long sessionId, String pid, boolean move) implements Step {}

    /** The departed instance can hold nothing any more: delete its PID nodes (and its pids node). */
    record Release(ModuleKey module, InstanceId instance, long sessionId, boolean removePidsNode) implements Step {}

    /** Write ADDING. */
    record Add(ModuleKey module, InstanceId instance, long sessionId, String pid) implements Step {}

    /**
     * Something the policy reports rather than does.
     *
     * @param alert whether an operator should hear of it (brakes, throttles); else it is logged at debug
     * @param key identifies the condition, so an alert is raised once while it lasts
     */
    record Signal(boolean alert, String key, String message) {
        public static Signal alert(String key, String message) {
            return new Signal(true, key, message);
        }

        public static Signal info(String message) {
            return new Signal(false, message, message);
        }
    }

    /**
     * @param signals brakes, throttles and waits, for logs and alerts
     */
    record Placement(List<Step> steps, List<Signal> signals) {
        public Placement {
            steps = List.copyOf(steps);
            signals = List.copyOf(signals);
        }
    }
}
