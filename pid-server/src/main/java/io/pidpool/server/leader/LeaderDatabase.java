package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
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
 * <p>Fencing: {@link #beginTerm} raises the store's leader epoch ({@link
 * io.pidpool.core.port.LeaderFence}) to the term's; every write carries the writer's epoch and runs in
 * a transaction that first checks it is still the stored one, so a deposed leader's write fails with
 * {@code FENCED} and changes nothing (docs/database.md, "Fencing the leader's writes").
 *
 * <p>Thread-safe; every method is atomic and blocking.
 */
public interface LeaderDatabase {
    /**
     * The highest leader epoch the store has seen ({@link Epoch#NONE} if none): a new term's epoch must
     * be above it.
     */
    Epoch leaderEpoch();

    /**
     * Starts a term in the store: raises the stored leader epoch to {@code epoch}. From then on every
     * write of an older epoch is refused.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} if a newer term has begun
     */
    void beginTerm(Epoch epoch);

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

    /** Forgets which accounts changed more than {@code keepVersions} versions ago (fenced by {@code epoch}). */
    default void pruneChanges(long keepVersions, Epoch epoch) {}

    /** Every assignment row. */
    default List<Assignment> loadAssignments() {
        return load().assignments();
    }

    /**
     * Creates or replaces assignment rows, each stamped with the writer's epoch {@code epoch} (FENCED if
     * the store's epoch or a stored row is newer).
     */
    void recordAssignments(Collection<Assignment> rows, Epoch epoch);

    /** Removes the rows of these PIDs (FENCED if the store's epoch or a stored row is newer than {@code epoch}). */
    void removeAssignments(Collection<String> pidIds, Epoch epoch);

    /** Replaces stored accounts, e.g. to put one into cooldown or take it out (FENCED as above). */
    void updatePids(Collection<PidRecord> pids, Epoch epoch);

    /** The stored cooldowns (end times survive a change of leader); empty if this store keeps none. */
    default List<Cooldown> loadCooldowns() {
        return List.of();
    }

    /** Stores cooldowns that started and removes those that ended, in one go (FENCED as above). */
    default void recordCooldowns(Collection<Cooldown> started, Collection<String> ended, Epoch epoch) {}

    record Snapshot(List<ModuleConfig> modules, List<PidRecord> pids, List<Assignment> assignments) {
        public Snapshot {
            modules = List.copyOf(modules);
            pids = List.copyOf(pids);
            assignments = List.copyOf(assignments);
        }
    }
}
