package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.Cooldown;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A {@link LeaderDatabase} that tells the simulation's fencing checker when a term has read its
 * accounts: the moment the production term start ({@link TermStart}, through {@link TermLoader})
 * returns from {@link #loadAccounts}, with the epoch the term raised the database to just before. From
 * then on no write of an older epoch may land. Everything else is passed on unchanged.
 */
final class TermLoadWitness implements LeaderDatabase {
    private final LeaderDatabase store;
    private final Consumer<Epoch> loaded;
    private Epoch epoch = Epoch.NONE;

    TermLoadWitness(LeaderDatabase store, Consumer<Epoch> loaded) {
        this.store = store;
        this.loaded = loaded;
    }

    @Override
    public Epoch leaderEpoch() {
        return store.leaderEpoch();
    }

    @Override
    public void beginTerm(Epoch epoch) {
        store.beginTerm(epoch);
        this.epoch = epoch;
    }

    @Override
    public AccountSnapshot loadAccounts() {
        AccountSnapshot accounts = store.loadAccounts();
        loaded.accept(epoch);
        return accounts;
    }

    @Override
    public Snapshot load() {
        return store.load();
    }

    @Override
    public Optional<AccountChanges> changesSince(long version) {
        return store.changesSince(version);
    }

    @Override
    public void pruneChanges(long keepVersions, Epoch epoch) {
        store.pruneChanges(keepVersions, epoch);
    }

    @Override
    public List<Assignment> loadAssignments() {
        return store.loadAssignments();
    }

    @Override
    public void recordAssignments(Collection<Assignment> rows, Epoch epoch) {
        store.recordAssignments(rows, epoch);
    }

    @Override
    public void removeAssignments(Collection<String> pidIds, Epoch epoch) {
        store.removeAssignments(pidIds, epoch);
    }

    @Override
    public void updatePids(Collection<PidRecord> pids, Epoch epoch) {
        store.updatePids(pids, epoch);
    }

    @Override
    public List<Cooldown> loadCooldowns() {
        return store.loadCooldowns();
    }

    @Override
    public void recordCooldowns(Collection<Cooldown> started, Collection<String> ended, Epoch epoch) {
        store.recordCooldowns(started, ended, epoch);
    }
}
