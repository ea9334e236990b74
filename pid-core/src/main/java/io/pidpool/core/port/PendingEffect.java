package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationType;
import java.util.List;
import java.util.Set;

/**
 * What one operation of an unfinished batch will do to the PIDs someone asked about: its type, the
 * module it names and those of its PIDs that were asked about, in the operation's order. Enough for
 * a validator that projects the waiting batches onto a new one ({@link OperationLog#pendingEffects}).
 *
 * @param module ADD's module, MIGRATE's target, SET_SERVERS' module; {@code null} for the others
 */
public record PendingEffect(OperationType type, ModuleKey module, List<String> pidIds) {
    public PendingEffect {
        requireNonNull(type, "type");
        pidIds = List.copyOf(requireNonNull(pidIds, "pidIds"));
    }

    /** The effect of {@code op} on the PIDs in {@code asked}. */
    public static PendingEffect of(Operation<?> op, Set<String> asked) {
        return new PendingEffect(
                op.type(),
                op.moduleNamed(),
                op.pidIds().stream().filter(asked::contains).toList());
    }
}
