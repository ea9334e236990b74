package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.PidState;
import java.util.Map;
import java.util.Set;

/**
 * An instance whose ephemeral node vanished while its PID nodes are still in the leader's
 * bookkeeping. Until the grace period has passed since {@code departedAtNanos}, every PID it may
 * hold ({@link PidState#mayHold()}) and has not {@code released} stays untouchable: the process
 * may still be logged in (docs/design.md §6). The planner answers with a
 * {@link PlanStep.Release} once nothing of it can be held any more; the caller then drops it.
 *
 * @param departedAtNanos the leader's monotonic time ({@link io.pidpool.core.port.Ticker}) when it
 *     saw the ephemeral node go; must not be after the planning time
 * @param pids the PID nodes stamped with this session, with their last known state
 * @param released PIDs the instance gave up before leaving (a graceful close that revoked them):
 *     free at once, no grace needed
 */
public record DepartedInstance(
        InstanceId id, long sessionId, long departedAtNanos, Map<String, PidState> pids, Set<String> released) {
    public DepartedInstance {
        requireNonNull(id, "instance");
        pids = LiveInstance.copyStates(pids, "pids");
        released = PidSet.copyOf(released, "released");
    }

    /** A departure without any graceful release (a crash or a lost session). */
    public static DepartedInstance crashed(
            String id, long sessionId, long departedAtNanos, Map<String, PidState> pids) {
        return new DepartedInstance(InstanceId.of(id), sessionId, departedAtNanos, pids, Set.of());
    }

    public InstanceRef ref() {
        return new InstanceRef(id, sessionId);
    }

    /** Whether this instance may still hold {@code pid} if the grace period has not passed. */
    public boolean mayHold(String pid) {
        PidState state = pids.get(pid);
        return state != null && state.mayHold() && !released.contains(pid);
    }

    /** {@link #mayHold} for any of its PIDs, without looking each one up. */
    boolean mayHoldAny() {
        for (Map.Entry<String, PidState> node : pids.entrySet()) {
            if (node.getValue().mayHold() && !released.contains(node.getKey())) {
                return true;
            }
        }
        return false;
    }
}
