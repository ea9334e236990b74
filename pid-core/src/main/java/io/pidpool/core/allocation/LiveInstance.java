package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidState;
import java.util.Map;

/**
 * An instance whose ephemeral node exists, as the leader's ZooKeeper view shows it.
 *
 * @param id the ephemeral node's name
 * @param sessionId the ZooKeeper session that owns the ephemeral node; new PID nodes are stamped
 *     with it
 * @param weight the instance's share relative to its peers, 1..{@link ModuleConfig#MAX_WEIGHT}; the
 *     caller resolves it (operator override in {@link ModuleConfig#instanceWeights()}, else 1)
 * @param registrationOrder when the instance registered, e.g. the ephemeral node's creation zxid;
 *     only the order matters. Earlier instances win ties, so a plan does not depend on map order.
 * @param pids the PID nodes under {@code <instance>-pids} that are stamped with {@code sessionId},
 *     with their state. Nodes stamped with an older session of the same name belong to a
 *     {@link DepartedInstance}.
 * @param previous the instance the same process registered as before its session was lost, as its
 *     node says; {@code null}: none. A vacant slot that instance held goes to this one first.
 */
public record LiveInstance(
        InstanceId id,
        long sessionId,
        int weight,
        long registrationOrder,
        Map<String, PidState> pids,
        InstanceId previous) {
    /** An instance that names no previous instance. */
    public LiveInstance(InstanceId id, long sessionId, int weight, long registrationOrder, Map<String, PidState> pids) {
        this(id, sessionId, weight, registrationOrder, pids, null);
    }

    /** This instance, naming the instance the same process registered as before. */
    public LiveInstance withPrevious(InstanceId previous) {
        return new LiveInstance(id, sessionId, weight, registrationOrder, pids, previous);
    }

    public LiveInstance {
        requireNonNull(id, "instance");
        requireArgument(
                weight >= 1 && weight <= ModuleConfig.MAX_WEIGHT,
                "weight",
                "weight of %s must be within 1..%d, was %d",
                id,
                ModuleConfig.MAX_WEIGHT,
                weight);
        pids = copyStates(pids, "pids");
    }

    /** An instance of weight 1. */
    public static LiveInstance of(String id, long sessionId, long registrationOrder, Map<String, PidState> pids) {
        return new LiveInstance(InstanceId.of(id), sessionId, 1, registrationOrder, pids);
    }

    public InstanceRef ref() {
        return new InstanceRef(id, sessionId);
    }

    /**
     * A defensive, order-preserving, unmodifiable copy (plans must not depend on hash salt); an array
     * copy, since the source's PIDs are distinct already.
     */
    static Map<String, PidState> copyStates(Map<String, PidState> states, String field) {
        return InstancePidNodes.copyOf(states, field);
    }
}
