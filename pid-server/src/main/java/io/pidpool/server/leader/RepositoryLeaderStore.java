package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidAccount;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.Repositories;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * {@link LeaderStore} over the core repositories (Jdbi in production, in-memory fakes in tests).
 *
 * <p>Concurrency: thread-safe, as the repositories are.
 */
public final class RepositoryLeaderStore implements LeaderStore {
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
        Snapshot accounts = loadAccounts();
        return new Snapshot(accounts.modules(), accounts.pids(), loadAssignments());
    }

    @Override
    public Snapshot loadAccounts() {
        List<ModuleConfig> modules = new ArrayList<>();
        List<PidAccount> pids = new ArrayList<>();
        for (PidWithModule entry : repositories.pids().loadPidWithModule()) {
            modules.add(entry.module());
            pids.addAll(entry.pids());
        }
        return new Snapshot(modules, pids, List.of());
    }

    @Override
    public List<Assignment> loadAssignments() {
        return repositories.assignments().findAll();
    }

    @Override
    public void recordAssignments(Collection<Assignment> rows) {
        repositories.assignments().recordAll(rows);
    }

    @Override
    public void removeAssignments(Collection<String> pidIds, Epoch epoch) {
        repositories.transactor().useTransaction(() -> {
            for (String pid : pidIds) {
                repositories.assignments().remove(pid, epoch);
            }
        });
    }

    @Override
    public List<Cooldown> loadCooldowns() {
        return cooldowns == null ? List.of() : cooldowns.findAll();
    }

    @Override
    public void recordCooldowns(Collection<Cooldown> started, Collection<String> ended) {
        if (cooldowns == null || (started.isEmpty() && ended.isEmpty())) {
            return;
        }
        repositories.transactor().useTransaction(() -> {
            ended.forEach(cooldowns::remove);
            started.forEach(cooldowns::put);
        });
    }

    @Override
    public void updatePids(Collection<PidAccount> pids) {
        repositories.pids().updateAll(pids);
    }
}
