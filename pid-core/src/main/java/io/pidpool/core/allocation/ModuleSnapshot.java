package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the leader knows about one module when it plans: the operator's configuration, the database
 * view (which PIDs the module should have) and the ZooKeeper view (who holds what).
 *
 * @param desiredPids the module's assignable PIDs: the database's ACTIVE PIDs of this module. A
 *     held PID that is not in this set is withdrawn; a desired PID nobody holds is handed out.
 * @param live instances whose ephemeral node exists; ids are unique
 * @param departed instances whose ephemeral node vanished and whose bookkeeping was not yet dropped
 * @param cooldowns PIDs in cooldown (a login failure or conflict was reported, or they failed to be
 *     taken up too often) with the leader's monotonic time at which the cooldown ends. A desired PID
 *     is unassignable while {@code now < end}: it is handed to nobody and withdrawn from its holder,
 *     exactly as if it were not desired; from {@code end} on it is desired again. Entries for PIDs
 *     that are not desired have no effect.
 */
public record ModuleSnapshot(
        ModuleConfig config,
        Set<String> desiredPids,
        List<LiveInstance> live,
        List<DepartedInstance> departed,
        Map<String, Long> cooldowns) {
    public ModuleSnapshot {
        requireNonNull(config, "config");
        if (cooldowns == null || cooldowns.isEmpty()) {
            cooldowns = Map.of();
        } else {
            cooldowns.forEach((pid, end) ->
                    requireArgument(pid != null && end != null, "cooldowns", "cooldowns holds a null PID or end time"));
            cooldowns = Map.copyOf(cooldowns);
        }
        // an array copy: the source is a set, its PIDs are distinct already (no hashing)
        desiredPids = PidSet.copyOf(desiredPids, "desiredPids");
        live = List.copyOf(live == null ? List.of() : live);
        departed = List.copyOf(departed == null ? List.of() : departed);
        var ids = new HashSet<InstanceId>();
        for (LiveInstance instance : live) {
            requireArgument(
                    ids.add(instance.id()), "live", "instance %s is live twice in %s", instance.id(), config.key());
        }
        var refs = new HashSet<InstanceRef>();
        for (LiveInstance instance : live) {
            refs.add(instance.ref());
        }
        for (DepartedInstance instance : departed) {
            requireArgument(
                    refs.add(instance.ref()),
                    "departed",
                    "instance %s is listed twice (live or departed) in %s",
                    instance.ref(),
                    config.key());
        }
    }

    /** A module without cooldowns. */
    public ModuleSnapshot(
            ModuleConfig config, Set<String> desiredPids, List<LiveInstance> live, List<DepartedInstance> departed) {
        this(config, desiredPids, live, departed, Map.of());
    }

    public ModuleKey key() {
        return config.key();
    }

    /** Whether {@code pid} is in cooldown at {@code nowNanos}. */
    public boolean coolingDown(String pid, long nowNanos) {
        Long end = cooldowns.get(pid);
        return end != null && nowNanos - end < 0;
    }

    /**
     * This module as the planner sees it at {@code nowNanos}: the desired PIDs without those in
     * cooldown, and no cooldowns. Returns {@code this} when no desired PID is cooling down.
     */
    ModuleSnapshot assignableAt(long nowNanos) {
        if (cooldowns.isEmpty()) {
            return this;
        }
        List<String> assignable = new ArrayList<>(desiredPids.size());
        for (String pid : desiredPids) {
            if (!coolingDown(pid, nowNanos)) {
                assignable.add(pid);
            }
        }
        return new ModuleSnapshot(config, PidSet.ofDistinct(assignable), live, departed, Map.of());
    }
}
