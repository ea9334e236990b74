package io.pidpool.core.port;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The leader's record of which instance each PID node is written to, in which node state, stamped
 * with the leader epoch that wrote it. At most one row per PID. This mirrors ZooKeeper for recovery
 * and reporting; ZooKeeper's {@code /epoch} check remains the real fence.
 *
 * <p>Fencing: a write or removal carrying epoch {@code e} is refused with {@code FENCED} when the
 * stored row carries a newer epoch, so a deposed leader cannot overwrite its successor's rows.
 * Every method is atomic. Thread-safe.
 */
public interface AssignmentRepository {
    /**
     * Creates or replaces the rows of these PIDs, all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} on {@code epoch} if a stored row
     *     is newer, {@code NOT_FOUND} on {@code pid.id} / {@code module} for an unknown PID or module,
     *     {@code INVALID_ARGUMENT} on {@code pid.id} if a PID appears twice
     */
    void recordAll(Collection<Assignment> assignments);

    default void record(Assignment assignment) {
        recordAll(List.of(assignment));
    }

    /**
     * Removes the rows of these PIDs, all or none (PIDs without a row are skipped).
     *
     * @return how many rows there were
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} on {@code epoch} if a stored row
     *     is newer; then nothing is removed
     */
    int removeAll(Collection<String> pidIds, Epoch epoch);

    /**
     * Removes the row of a PID.
     *
     * @return whether there was one
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} if the stored row is newer
     */
    default boolean remove(String pidId, Epoch epoch) {
        return removeAll(List.of(pidId), epoch) == 1;
    }

    Optional<Assignment> find(String pidId);

    /** Rows of one module, ordered by instance then PID id. */
    List<Assignment> findByModule(ModuleKey module);

    /** Rows of one instance, ordered by PID id. */
    List<Assignment> findByInstance(ModuleKey module, InstanceId instance);

    /** Every row, ordered by PID id. */
    List<Assignment> findAll();
}
