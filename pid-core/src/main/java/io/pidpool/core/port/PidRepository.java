package io.pidpool.core.port;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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
    void insertAll(Collection<PidRecord> pids);

    default void insert(PidRecord pid) {
        insertAll(List.of(pid));
    }

    /**
     * Replaces stored accounts (module, quotas, status, secret, attributes), all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code pid.id} for an
     *     unknown id, {@code NOT_FOUND} on {@code pid.module} for an unknown module,
     *     {@code INVALID_ARGUMENT} on {@code pid.id} if an id appears twice
     */
    void updateAll(Collection<PidRecord> pids);

    default void update(PidRecord pid) {
        updateAll(List.of(pid));
    }

    /**
     * Deletes accounts, all or none.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code pid.id} if one is
     *     unknown, {@code INVALID_ARGUMENT} on {@code pid.id} if an id appears twice
     */
    void deleteAll(Collection<String> ids);

    Optional<PidRecord> find(String id);

    /** The accounts among {@code ids} that exist, ordered by id. */
    List<PidRecord> findAll(Collection<String> ids);

    /**
     * The module of each account among {@code ids} that exists: what a check of a batch needs, without
     * reading secrets and attributes (a batch may name 10,000 PIDs).
     */
    default Map<String, ModuleKey> modulesOf(Collection<String> ids) {
        Map<String, ModuleKey> modules = new HashMap<>();
        findAll(ids).forEach(p -> modules.put(p.id(), p.module()));
        return modules;
    }

    /** The accounts of one module, ordered by id. */
    List<PidRecord> findByModule(ModuleKey module);

    /**
     * Every module with its configuration and its accounts, read in one transaction, ordered by
     * module (modules without accounts included): what a new leader loads first.
     */
    List<PidWithModule> loadPidWithModule();

    /**
     * Every module and every account, read in one transaction, with the account version of that read:
     * what a new leader or a warm follower loads. The default reads {@link #loadPidWithModule()} and
     * has no version.
     */
    default AccountSnapshot loadAccounts() {
        var modules = new ArrayList<ModuleConfig>();
        var pids = new ArrayList<PidRecord>();
        for (PidWithModule entry : loadPidWithModule()) {
            modules.add(entry.module());
            pids.addAll(entry.pids());
        }
        return new AccountSnapshot(AccountSnapshot.UNVERSIONED, modules, pids);
    }

    /**
     * What changed after account version {@code version} (a {@link AccountSnapshot#version()}), read in
     * one transaction, or empty if the store cannot tell (it keeps no version, or has pruned what it
     * knew about changes that old): then only a full {@link #loadAccounts()} is current.
     *
     * <p>The account version counts committed transactions that inserted, updated or deleted an account
     * or put a module; a store that keeps one increments it in each such transaction, before its other
     * writes, so versions are committed in increasing order and a snapshot of version {@code v} holds
     * exactly the transactions up to {@code v}.
     */
    default Optional<AccountChanges> changesSince(long version) {
        return Optional.empty();
    }

    /**
     * Forgets which accounts changed in all but the newest {@code keepVersions} versions
     * ({@link #changesSince} is empty for the versions before those afterwards). Nothing if the store
     * keeps no version.
     */
    default void pruneChanges(long keepVersions) {}
}
