package io.pidpool.core.fake;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.AssignmentRepository;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link AssignmentRepository} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryAssignmentRepository implements AssignmentRepository {
    private final InMemoryDatabase db;

    InMemoryAssignmentRepository(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void recordAll(Collection<Assignment> assignments) {
        List<Assignment> list = List.copyOf(Preconditions.requireNonNull(assignments, "assignments"));
        var seen = new HashSet<String>();
        for (Assignment a : list) {
            Preconditions.requireArgument(seen.add(a.pidId()), "pid.id", "PID %s appears twice", a.pidId());
        }
        db.write(() -> {
            for (Assignment a : list) {
                if (!db.pids.contains(a.pidId())) {
                    throw PidPoolException.notFound("pid.id", "PID %s does not exist", a.pidId());
                }
            }
            for (Assignment a : list) {
                if (!db.modules.contains(a.module())) {
                    throw PidPoolException.notFound("module", "module %s does not exist", a.module());
                }
            }
            for (Assignment a : list) {
                Assignment stored = db.assignments.get(a.pidId());
                if (stored != null && a.epoch().isOlderThan(stored.epoch())) {
                    throw fenced(a.pidId(), stored.epoch(), a.epoch());
                }
            }
            list.forEach(a -> db.assignments.put(a.pidId(), a));
            return null;
        });
    }

    @Override
    public int removeAll(Collection<String> pidIds, Epoch epoch) {
        Set<String> ids = new LinkedHashSet<>(Preconditions.requireNonNull(pidIds, "pidIds"));
        ids.forEach(id -> Names.requirePidId(id, "pid.id"));
        Preconditions.requireNonNull(epoch, "epoch");
        return db.write(() -> {
            for (String id : ids) {
                Assignment stored = db.assignments.get(id);
                if (stored != null && epoch.isOlderThan(stored.epoch())) {
                    throw fenced(id, stored.epoch(), epoch);
                }
            }
            int removed = 0;
            for (String id : ids) {
                if (db.assignments.get(id) != null) {
                    db.assignments.remove(id);
                    removed++;
                }
            }
            return removed;
        });
    }

    @Override
    public Optional<Assignment> find(String pidId) {
        Names.requirePidId(pidId, "pid.id");
        return db.read(() -> db.assignments.find(pidId));
    }

    @Override
    public List<Assignment> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        return db.read(() -> db.assignments.values().stream()
                .filter(a -> a.module().equals(module))
                .sorted(Comparator.comparing(Assignment::instance).thenComparing(Assignment::pidId))
                .toList());
    }

    @Override
    public List<Assignment> findByInstance(ModuleKey module, InstanceId instance) {
        Preconditions.requireNonNull(module, "module");
        Preconditions.requireNonNull(instance, "instance");
        return db.read(() -> db.assignments.values().stream()
                .filter(a -> a.module().equals(module) && a.instance().equals(instance))
                .toList());
    }

    @Override
    public List<Assignment> findAll() {
        return db.read(db.assignments::valuesList);
    }

    private static PidPoolException fenced(String pidId, Epoch stored, Epoch by) {
        return new PidPoolException(
                ErrorCode.FENCED,
                "epoch",
                String.format(
                        "assignment of %s was written by epoch %d; epoch %d is fenced off",
                        pidId, stored.value(), by.value()));
    }
}
