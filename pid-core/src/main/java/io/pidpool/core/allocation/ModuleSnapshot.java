package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What the leader knows about one module when it plans: the operator's configuration, the database
 * view (which PIDs the module should have) and the ZooKeeper view (who holds what).
 *
 * @param desiredPids the module's assignable PIDs: the database's ACTIVE PIDs of this module. A
 *     held PID that is not in this set is withdrawn; a desired PID nobody holds is handed out.
 * @param live instances whose ephemeral node exists; ids are unique
 * @param departed instances whose ephemeral node vanished and whose bookkeeping was not yet dropped
 */
public record ModuleSnapshot(
        ModuleConfig config, Set<String> desiredPids, List<LiveInstance> live, List<DepartedInstance> departed) {
    public ModuleSnapshot {
        requireNonNull(config, "config");
        if (desiredPids == null || desiredPids.isEmpty()) {
            desiredPids = Set.of();
        } else {
            desiredPids.forEach(pid -> requireArgument(pid != null, "desiredPids", "desiredPids holds a null PID"));
            desiredPids = Collections.unmodifiableSet(new LinkedHashSet<>(desiredPids));
        }
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

    public ModuleKey key() {
        return config.key();
    }
}
