package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.Repositories;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * {@link LeaderDatabase} over the core repositories (Jdbi in production, in-memory fakes in tests). Every
 * write is one unit of work that ends with a check of the store's leader epoch ({@link
 * io.pidpool.core.port.LeaderFence#check}), so it commits only while the writer's term is the newest.
 *
 * <p>Concurrency: thread-safe, as the repositories are.
 */
public final class RepositoryLeaderStore implements LeaderDatabase {
    private final Repositories repositories;
    private final CooldownRepository cooldowns;

    public RepositoryLeaderStore(Repositories repositories) {
        this(repositories, null);
    }

    /** @param cooldowns where cooldown end times are kept; {@code null}: nowhere (a new leader starts them over) */
    public RepositoryLeaderStore(Repositories repositories, CooldownRepository cooldowns) {
        this.repositories = repositories;
        this.cooldowns = cooldowns;
    }

    public Repositories repositories() {
        return repositories;
    }

    @Override
    public Snapshot load() {
        AccountSnapshot accounts = loadAccounts();
        return new Snapshot(accounts.modules(), accounts.pids(), loadAssignments());
    }

    @Override
    public AccountSnapshot loadAccounts() {
        return repositories.pids().loadAccounts();
    }

    @Override
    public Optional<AccountChanges> changesSince(long version) {
        return repositories.pids().changesSince(version);
    }

    @Override
    public Epoch leaderEpoch() {
        return repositories.fence().current();
    }

    @Override
    public void beginTerm(Epoch epoch) {
        repositories.fence().raise(epoch);
    }

    @Override
    public void pruneChanges(long keepVersions, Epoch epoch) {
        fenced(epoch, () -> repositories.pids().pruneChanges(keepVersions));
    }

    @Override
    public List<Assignment> loadAssignments() {
        return repositories.assignments().findAll();
    }

    @Override
    public void recordAssignments(Collection<Assignment> rows, Epoch epoch) {
        fenced(epoch, () -> repositories.assignments().recordAll(rows));
    }

    @Override
    public void removeAssignments(Collection<String> pidIds, Epoch epoch) {
        fenced(epoch, () -> repositories.assignments().removeAll(pidIds, epoch));
    }

    @Override
    public List<Cooldown> loadCooldowns() {
        return cooldowns == null ? List.of() : cooldowns.findAll();
    }

    @Override
    public void recordCooldowns(Collection<Cooldown> started, Collection<String> ended, Epoch epoch) {
        if (cooldowns == null || (started.isEmpty() && ended.isEmpty())) {
            return;
        }
        fenced(epoch, () -> {
            ended.forEach(cooldowns::remove);
            started.forEach(cooldowns::put);
        });
    }

    @Override
    public void updatePids(Collection<PidRecord> pids, Epoch epoch) {
        fenced(epoch, () -> repositories.pids().updateAll(pids));
    }

    /**
     * Runs a leader's writes in one unit of work that ends with the epoch check (held to the commit; last,
     * so that a stalled deposed leader never holds up its successor's term start: {@link
     * io.pidpool.core.port.LeaderFence}).
     */
    private void fenced(Epoch epoch, Runnable writes) {
        repositories.transactor().useTransaction(() -> {
            writes.run();
            repositories.fence().check(epoch);
        });
    }
}
