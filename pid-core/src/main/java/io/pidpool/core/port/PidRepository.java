package io.pidpool.core.port;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAccount;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * The accounts PidPool manages. Secrets are stored only in their sealed form: this port never sees a
 * plain password. Every method is atomic: a call that throws has changed nothing. Thread-safe.
 *
 * <p>Deleting a PID also deletes its {@link AssignmentRepository assignment} row; its usage history
 * in the {@link UsageLedger} stays.
 */
public interface PidRepository {
    /**
     * Stores new accounts, all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code CONFLICT} on {@code pid.id} if an id
     *     exists or appears twice, {@code NOT_FOUND} on {@code pid.module} for an unknown module,
     *     {@code INVALID_ARGUMENT} if a secret or the attributes exceed {@link StorageLimits}
     */
    void insertAll(Collection<PidAccount> pids);

    default void insert(PidAccount pid) {
        insertAll(List.of(pid));
    }

    /**
     * Replaces stored accounts (module, quotas, status, secret, attributes), all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code pid.id} for an
     *     unknown id, {@code NOT_FOUND} on {@code pid.module} for an unknown module,
     *     {@code INVALID_ARGUMENT} on {@code pid.id} if an id appears twice
     */
    void updateAll(Collection<PidAccount> pids);

    default void update(PidAccount pid) {
        updateAll(List.of(pid));
    }

    /**
     * Deletes accounts, all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code pid.id} if one is
     *     unknown, {@code INVALID_ARGUMENT} on {@code pid.id} if an id appears twice
     */
    void deleteAll(Collection<String> ids);

    Optional<PidAccount> find(String id);

    /** The accounts among {@code ids} that exist, ordered by id. */
    List<PidAccount> findAll(Collection<String> ids);

    /** The accounts of one module, ordered by id. */
    List<PidAccount> findByModule(ModuleKey module);

    /**
     * Every module with its configuration and its accounts, read in one transaction, ordered by
     * module (modules without accounts included): what a new leader loads first.
     */
    List<PidWithModule> loadPidWithModule();
}
