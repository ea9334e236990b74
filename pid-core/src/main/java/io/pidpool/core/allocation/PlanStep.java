package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;

/**
 * One instruction of a {@link Plan}. The caller applies them in plan order: every delete, then
 * every release, then every add.
 */
public sealed interface PlanStep {
    ModuleKey module();

    InstanceRef instance();

    String pid();

    /**
     * Write DELETING to {@code <instance>-pids/<pid>}. The PID may be handed to another instance
     * only after the instance acknowledged DELETED (or vanished and the grace period passed).
     */
    record Delete(ModuleKey module, InstanceRef instance, String pid, DeleteReason reason) implements PlanStep {
        public Delete {
            requireNonNull(module, "module");
            requireNonNull(instance, "instance");
            requireNonNull(pid, "pid");
            requireNonNull(reason, "reason");
        }
    }

    /**
     * Drop the bookkeeping of a departed instance: it cannot hold anything any more (grace passed
     * or everything released). Delete the PID nodes stamped with its session; delete its
     * {@code <instance>-pids} node too when {@code removePidsNode} (false when a live instance
     * registered again under the same name and owns that node now).
     */
    record Release(ModuleKey module, InstanceRef instance, boolean removePidsNode) implements PlanStep {
        public Release {
            requireNonNull(module, "module");
            requireNonNull(instance, "instance");
        }

        /** A release concerns the instance, not one PID: {@code null}. */
        @Override
        public String pid() {
            return null;
        }
    }

    /**
     * Write ADDING to {@code <instance>-pids/<pid>}, stamped with the instance's session. When a node
     * for the PID is left there in state DELETED, the caller replaces it. Planned only when no
     * instance (live, or departed within the grace period) may hold the PID.
     */
    record Add(ModuleKey module, InstanceRef instance, String pid) implements PlanStep {
        public Add {
            requireNonNull(module, "module");
            requireNonNull(instance, "instance");
            requireNonNull(pid, "pid");
        }
    }
}
