package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidAccount;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.Cooldown;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What the leader reads from and writes to the database outside operator batches: its database
 * view ({@code pidWithModule}) and the assignment rows that mirror ZooKeeper. A facade over the core
 * repositories, so the leader depends on one small role.
 *
 * <p>Thread-safe; every method is atomic and blocking.
 */
public interface LeaderStore {
    /** Every module, every PID and every assignment row. */
    Snapshot load();

    /**
     * Every module and every PID, without the assignment rows, with the account version of the read:
     * what a new term needs before it serves (the rows only mirror ZooKeeper and are diffed after the
     * first pass), and what a follower keeps warm ({@link WarmAccounts}).
     */
    default AccountSnapshot loadAccounts() {
        Snapshot all = load();
        return new AccountSnapshot(AccountSnapshot.UNVERSIONED, all.modules(), all.pids());
    }

    /**
     * What an {@link AccountSnapshot} of {@code version} lacks to be current, or empty if the store
     * cannot tell (see {@link io.pidpool.core.port.PidRepository#changesSince(long)}).
     */
    default Optional<AccountChanges> changesSince(long version) {
        return Optional.empty();
    }

    /** Forgets which accounts changed more than {@code keepVersions} versions ago. */
    default void pruneChanges(long keepVersions) {}

    /** Every assignment row. */
    default List<Assignment> loadAssignments() {
        return load().assignments();
    }

    /** Creates or replaces assignment rows (each stamped with the writer's epoch; FENCED if a stored row is newer). */
    void recordAssignments(Collection<Assignment> rows);

    /** Removes the rows of these PIDs (FENCED if a stored row is newer than {@code epoch}). */
    void removeAssignments(Collection<String> pidIds, Epoch epoch);

    /** Replaces stored accounts, e.g. to put one into cooldown or take it out. */
    void updatePids(Collection<PidAccount> pids);

    /** The stored cooldowns (end times survive a change of leader); empty if this store keeps none. */
    default List<Cooldown> loadCooldowns() {
        return List.of();
    }

    /** Stores cooldowns that started and removes those that ended, in one go. */
    default void recordCooldowns(Collection<Cooldown> started, Collection<String> ended) {}

    record Snapshot(List<ModuleConfig> modules, List<PidAccount> pids, List<Assignment> assignments) {
        public Snapshot {
            modules = List.copyOf(modules);
            pids = List.copyOf(pids);
            assignments = List.copyOf(assignments);
        }
    }
}
