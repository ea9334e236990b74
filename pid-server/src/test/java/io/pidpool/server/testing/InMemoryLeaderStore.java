package io.pidpool.server.testing;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAccount;
import io.pidpool.server.leader.LeaderStore;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** A {@link LeaderStore} in memory, shared by every node of a test. Thread-safe (one lock). */
public final class InMemoryLeaderStore implements LeaderStore {
    private final Map<ModuleKey, ModuleConfig> modules = new TreeMap<>();
    private final Map<String, PidAccount> pids = new TreeMap<>();
    private final Map<String, Assignment> assignments = new TreeMap<>();

    public synchronized void putModule(ModuleConfig config) {
        modules.put(config.key(), config);
    }

    public synchronized void putPid(PidAccount pid) {
        pids.put(pid.id(), pid);
    }

    public synchronized void removePid(String id) {
        pids.remove(id);
        assignments.remove(id);
    }

    public synchronized PidAccount pid(String id) {
        return pids.get(id);
    }

    public synchronized Map<String, Assignment> assignments() {
        return Map.copyOf(assignments);
    }

    @Override
    public synchronized Snapshot load() {
        return new Snapshot(
                List.copyOf(modules.values()), List.copyOf(pids.values()), List.copyOf(assignments.values()));
    }

    @Override
    public synchronized void recordAssignments(Collection<Assignment> rows) {
        for (Assignment row : rows) {
            Assignment stored = assignments.get(row.pidId());
            if (stored != null && row.epoch().isOlderThan(stored.epoch())) {
                throw new PidPoolException(ErrorCode.FENCED, "epoch", "row of " + row.pidId() + " is newer");
            }
            if (!pids.containsKey(row.pidId())) {
                throw PidPoolException.notFound("pid.id", "unknown PID %s", row.pidId());
            }
        }
        rows.forEach(row -> assignments.put(row.pidId(), row));
    }

    @Override
    public synchronized void removeAssignments(Collection<String> pidIds, Epoch epoch) {
        List<String> removable = new ArrayList<>();
        for (String id : pidIds) {
            Assignment stored = assignments.get(id);
            if (stored != null && epoch.isOlderThan(stored.epoch())) {
                throw new PidPoolException(ErrorCode.FENCED, "epoch", "row of " + id + " is newer");
            }
            removable.add(id);
        }
        removable.forEach(assignments::remove);
    }

    @Override
    public synchronized void updatePids(Collection<PidAccount> updated) {
        for (PidAccount pid : updated) {
            if (!pids.containsKey(pid.id())) {
                throw PidPoolException.notFound("pid.id", "unknown PID %s", pid.id());
            }
        }
        updated.forEach(pid -> pids.put(pid.id(), pid));
    }
}
