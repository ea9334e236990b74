package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AccountChanges;
import io.pidpool.core.port.AccountSnapshot;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.StorageLimits;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/** {@link PidRepository} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryPidRepository implements PidRepository {
    private final InMemoryDatabase db;

    InMemoryPidRepository(InMemoryDatabase db) {
        this.db = db;
    }

    InMemoryDatabase db() {
        return db;
    }

    @Override
    public void insertAll(Collection<PidRecord> pids) {
        List<PidRecord> list = List.copyOf(Preconditions.requireNonNull(pids, "pids"));
        list.forEach(StorageLimits::requireStorable);
        db.write(() -> {
            var seen = new HashSet<String>();
            for (PidRecord pid : list) {
                if (!seen.add(pid.id())) {
                    throw PidPoolException.conflict("pid.id", "PID %s appears twice", pid.id());
                }
            }
            var existing = new TreeSet<String>();
            list.stream().map(PidRecord::id).filter(db.pids::contains).forEach(existing::add);
            if (!existing.isEmpty()) {
                throw PidPoolException.conflict("pid.id", "PIDs already exist: %s", String.join(", ", existing));
            }
            requireModules(list);
            list.forEach(pid -> db.pids.put(pid.id(), pid));
            db.bumpAccountVersion(seen);
            return null;
        });
    }

    @Override
    public void updateAll(Collection<PidRecord> pids) {
        List<PidRecord> list = List.copyOf(Preconditions.requireNonNull(pids, "pids"));
        list.forEach(StorageLimits::requireStorable);
        requireDistinct(list.stream().map(PidRecord::id).toList());
        db.write(() -> {
            requireExisting(list.stream().map(PidRecord::id).toList());
            requireModules(list);
            list.forEach(pid -> db.pids.put(pid.id(), pid));
            db.bumpAccountVersion(list.stream().map(PidRecord::id).toList());
            return null;
        });
    }

    @Override
    public void deleteAll(Collection<String> ids) {
        List<String> list = List.copyOf(Preconditions.requireNonNull(ids, "pids"));
        list.forEach(id -> Names.requirePidId(id, "pid.id"));
        requireDistinct(list);
        db.write(() -> {
            requireExisting(list);
            for (String id : list) {
                db.assignments.remove(id); // ON DELETE CASCADE
                db.cooldowns.remove(id);
                db.pids.remove(id);
            }
            db.bumpAccountVersion(list);
            return null;
        });
    }

    @Override
    public Optional<PidRecord> find(String id) {
        Names.requirePidId(id, "pid.id");
        return db.read(() -> db.pids.find(id));
    }

    @Override
    public List<PidRecord> findAll(Collection<String> ids) {
        var wanted = new TreeSet<String>(Preconditions.requireNonNull(ids, "pids"));
        wanted.forEach(id -> Names.requirePidId(id, "pid.id"));
        return db.read(() -> wanted.stream()
                .map(db.pids::get)
                .filter(java.util.Objects::nonNull)
                .toList());
    }

    @Override
    public List<PidRecord> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        return db.read(() -> db.pids.values().stream()
                .filter(pid -> pid.module().equals(module))
                .toList());
    }

    @Override
    public List<PidWithModule> loadPidWithModule() {
        return db.read(() -> {
            Map<ModuleKey, List<PidRecord>> byModule = new HashMap<>();
            for (PidRecord pid : db.pids.values()) {
                byModule.computeIfAbsent(pid.module(), m -> new ArrayList<>()).add(pid);
            }
            var result = new ArrayList<PidWithModule>();
            for (ModuleConfig module : db.modules.values()) {
                result.add(new PidWithModule(module, byModule.getOrDefault(module.key(), List.of())));
            }
            return List.copyOf(result);
        });
    }

    @Override
    public AccountSnapshot loadAccounts() {
        return db.read(() -> new AccountSnapshot(db.accountVersion(), db.modules.valuesList(), db.pids.valuesList()));
    }

    @Override
    public Optional<AccountChanges> changesSince(long version) {
        return db.read(() -> {
            long now = db.accountVersion();
            if (version < 0 || version > now || version + 1 < db.accountChangesPrunedBelow()) {
                return Optional.empty();
            }
            var ids = new TreeSet<String>();
            if (version < now) {
                db.accountChanges.range(version + 1, now).values().forEach(ids::addAll);
            }
            var changed = new ArrayList<PidRecord>();
            var removed = new TreeSet<String>();
            for (String id : ids) {
                PidRecord pid = db.pids.get(id);
                if (pid != null) {
                    changed.add(pid);
                } else {
                    removed.add(id);
                }
            }
            List<ModuleConfig> modules = version == now ? List.of() : db.modules.valuesList();
            return Optional.of(new AccountChanges(version, now, modules, changed, removed));
        });
    }

    @Override
    public void pruneChanges(long keepVersions) {
        Preconditions.requireArgument(keepVersions >= 0, "keepVersions", "must be >= 0, was %d", keepVersions);
        db.write(() -> {
            long below = db.accountVersion() - keepVersions + 1;
            if (below > db.accountChangesPrunedBelow()) {
                db.accountVersion.put(1, below);
                for (Long version :
                        List.copyOf(db.accountChanges.range(0L, below - 1).keySet())) {
                    db.accountChanges.remove(version);
                }
            }
            return null;
        });
    }

    private void requireModules(List<PidRecord> list) {
        for (PidRecord pid : list) {
            if (!db.modules.contains(pid.module())) {
                throw PidPoolException.notFound("pid.module", "module %s does not exist", pid.module());
            }
        }
    }

    private void requireExisting(List<String> ids) {
        var missing = new TreeSet<String>();
        ids.stream().filter(id -> !db.pids.contains(id)).forEach(missing::add);
        if (!missing.isEmpty()) {
            throw PidPoolException.notFound("pid.id", "PIDs do not exist: %s", String.join(", ", missing));
        }
    }

    private static void requireDistinct(List<String> ids) {
        var seen = new HashSet<String>();
        for (String id : ids) {
            Preconditions.requireArgument(seen.add(id), "pid.id", "PID %s appears twice", id);
        }
    }
}
