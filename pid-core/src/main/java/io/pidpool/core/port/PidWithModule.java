package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
import java.util.List;

/**
 * One module with its configuration and its PIDs: an entry of the leader's database view (seed
 * 000's {@code PidCollection#pidWithModule}).
 *
 * @param pids ordered by id
 */
public record PidWithModule(ModuleConfig module, List<PidRecord> pids) {
    public PidWithModule {
        requireNonNull(module, "module");
        pids = List.copyOf(requireNonNull(pids, "pids"));
        for (PidRecord pid : pids) {
            requireArgument(
                    pid.module().equals(module.key()),
                    "pids",
                    "PID %s belongs to %s, not %s",
                    pid.id(),
                    pid.module(),
                    module.key());
        }
    }
}
