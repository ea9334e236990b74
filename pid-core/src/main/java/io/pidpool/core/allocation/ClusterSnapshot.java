package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.ModuleKey;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything the planner looks at: one {@link ModuleSnapshot} per module. Exclusivity is checked
 * across modules (a PID migrating from module A to B is added in B only once A's holder let go),
 * so modules are planned together.
 *
 * <p>Rejects a module listed twice with {@link io.pidpool.core.error.ErrorCode#INVALID_ARGUMENT}.
 * A PID desired by two modules (the database keeps one module per PID) is rejected by
 * {@link AllocationPlanner#plan}, which hashes every PID anyway.
 */
public record ClusterSnapshot(List<ModuleSnapshot> modules) {
    public ClusterSnapshot {
        var byKey = new TreeMap<ModuleKey, ModuleSnapshot>();
        for (ModuleSnapshot module : modules == null ? List.<ModuleSnapshot>of() : modules) {
            requireArgument(module != null, "modules", "modules holds a null module");
            requireArgument(
                    byKey.put(module.key(), module) == null, "modules", "module %s is listed twice", module.key());
        }
        modules = List.copyOf(byKey.values());
    }

    public static ClusterSnapshot of(ModuleSnapshot... modules) {
        return new ClusterSnapshot(List.of(modules));
    }

    /** The modules by key, in key order. */
    public Map<ModuleKey, ModuleSnapshot> byKey() {
        var map = new TreeMap<ModuleKey, ModuleSnapshot>();
        modules.forEach(m -> map.put(m.key(), m));
        return map;
    }
}
