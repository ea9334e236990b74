package io.pidpool.server.jdbc;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.AssignmentRepository;
import java.time.Clock;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Handle;

/**
 * {@link AssignmentRepository} on table {@code pool_assignment}. Existing rows are locked
 * ({@code FOR UPDATE}) before their epochs are compared, so a fence check cannot race a newer
 * leader's write. Thread-safe.
 */
final class JdbiAssignmentRepository implements AssignmentRepository {
    private static final String COLUMNS = "pid_id, module_key, instance_id, node_state, leader_epoch, owner_session_id";

    private final JdbiSession session;
    private final Clock clock;

    JdbiAssignmentRepository(JdbiSession session, Clock clock) {
        this.session = session;
        this.clock = clock;
    }

    @Override
    public void recordAll(Collection<Assignment> assignments) {
        List<Assignment> list = List.copyOf(Preconditions.requireNonNull(assignments, "assignments"));
        var seen = new HashSet<String>();
        for (Assignment a : list) {
            Preconditions.requireArgument(seen.add(a.pidId()), "pid.id", "PID %s appears twice", a.pidId());
        }
        if (list.isEmpty()) {
            return;
        }
        session.write("pid.id", h -> {
            Set<String> pids = existing(h, "SELECT pid_id FROM pool_pid WHERE pid_id IN (", seen);
            for (Assignment a : list) {
                if (!pids.contains(a.pidId())) {
                    throw PidPoolException.notFound("pid.id", "PID %s does not exist", a.pidId());
                }
            }
            var moduleKeys = new HashSet<String>();
            list.forEach(a -> moduleKeys.add(a.module().toString()));
            Set<String> modules = existing(h, "SELECT module_key FROM pool_module WHERE module_key IN (", moduleKeys);
            for (Assignment a : list) {
                if (!modules.contains(a.module().toString())) {
                    throw PidPoolException.notFound("module", "module %s does not exist", a.module());
                }
            }
            Map<String, Long> stored = lockedEpochs(h, seen);
            for (Assignment a : list) {
                Long epoch = stored.get(a.pidId());
                if (epoch != null && a.epoch().value() < epoch) {
                    throw fenced(a.pidId(), epoch, a.epoch());
                }
            }
            LocalDateTime now = Rows.toDb(clock.instant());
            var updates = h.prepareBatch("UPDATE pool_assignment SET module_key = :module, instance_id = :instance,"
                    + " node_state = :state, leader_epoch = :epoch, owner_session_id = :session, updated_at = :now"
                    + " WHERE pid_id = :pid");
            var inserts = h.prepareBatch("INSERT INTO pool_assignment (pid_id, module_key, instance_id, node_state,"
                    + " leader_epoch, owner_session_id, updated_at)"
                    + " VALUES (:pid, :module, :instance, :state, :epoch, :session, :now)");
            for (Assignment a : list) {
                var batch = stored.containsKey(a.pidId()) ? updates : inserts;
                batch.bind("pid", a.pidId())
                        .bind("module", a.module().toString())
                        .bind("instance", a.instance().value())
                        .bind("state", a.state().name())
                        .bind("epoch", a.epoch().value())
                        .bind("session", a.ownerSessionId())
                        .bind("now", now)
                        .add();
            }
            if (updates.size() > 0) {
                updates.execute();
            }
            if (inserts.size() > 0) {
                inserts.execute();
            }
            return null;
        });
    }

    @Override
    public int removeAll(Collection<String> pidIds, Epoch epoch) {
        Set<String> ids = new LinkedHashSet<>(Preconditions.requireNonNull(pidIds, "pidIds"));
        ids.forEach(id -> Names.requirePidId(id, "pid.id"));
        Preconditions.requireNonNull(epoch, "epoch");
        if (ids.isEmpty()) {
            return 0;
        }
        return session.write("pid.id", h -> {
            Map<String, Long> stored = lockedEpochs(h, ids);
            for (Map.Entry<String, Long> row : stored.entrySet()) {
                if (epoch.value() < row.getValue()) {
                    throw fenced(row.getKey(), row.getValue(), epoch);
                }
            }
            for (List<String> chunk : Rows.chunks(stored.keySet())) {
                Rows.bindAll(
                                h.createUpdate("DELETE FROM pool_assignment WHERE pid_id IN ("
                                        + Rows.params("p", chunk.size()) + ")"),
                                "p",
                                chunk)
                        .execute();
            }
            return stored.size();
        });
    }

    @Override
    public Optional<Assignment> find(String pidId) {
        Names.requirePidId(pidId, "pid.id");
        return session.read(h -> h.createQuery("SELECT " + COLUMNS + " FROM pool_assignment WHERE pid_id = :pid")
                .bind("pid", pidId)
                .map((rs, ctx) -> row(rs))
                .findOne());
    }

    @Override
    public List<Assignment> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        List<Assignment> rows = session.read(
                h -> h.createQuery("SELECT " + COLUMNS + " FROM pool_assignment WHERE module_key = :module")
                        .bind("module", module.toString())
                        .map((rs, ctx) -> row(rs))
                        .list());
        return sorted(rows, Comparator.comparing(Assignment::instance).thenComparing(Assignment::pidId));
    }

    @Override
    public List<Assignment> findByInstance(ModuleKey module, InstanceId instance) {
        Preconditions.requireNonNull(module, "module");
        Preconditions.requireNonNull(instance, "instance");
        List<Assignment> rows = session.read(h -> h.createQuery("SELECT " + COLUMNS
                        + " FROM pool_assignment WHERE module_key = :module AND instance_id = :instance")
                .bind("module", module.toString())
                .bind("instance", instance.value())
                .map((rs, ctx) -> row(rs))
                .list());
        return sorted(rows, Comparator.comparing(Assignment::pidId));
    }

    @Override
    public List<Assignment> findAll() {
        List<Assignment> rows = session.read(h -> h.createQuery("SELECT " + COLUMNS + " FROM pool_assignment")
                .map((rs, ctx) -> row(rs))
                .list());
        return sorted(rows, Comparator.comparing(Assignment::pidId));
    }

    private static Assignment row(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new Assignment(
                rs.getString("pid_id"),
                ModuleKey.parse(rs.getString("module_key")),
                InstanceId.of(rs.getString("instance_id")),
                PidState.valueOf(rs.getString("node_state")),
                new Epoch(rs.getLong("leader_epoch")),
                rs.getLong("owner_session_id"));
    }

    private static List<Assignment> sorted(List<Assignment> rows, Comparator<Assignment> order) {
        var copy = new ArrayList<>(rows);
        copy.sort(order);
        return List.copyOf(copy);
    }

    private static Set<String> existing(Handle h, String selectIn, Collection<String> keys) {
        var found = new HashSet<String>();
        for (List<String> chunk : Rows.chunks(keys)) {
            found.addAll(Rows.bindAll(h.createQuery(selectIn + Rows.params("k", chunk.size()) + ")"), "k", chunk)
                    .mapTo(String.class)
                    .list());
        }
        return found;
    }

    /** Stored epochs of the rows of {@code pidIds}, locked until the transaction ends. */
    private static Map<String, Long> lockedEpochs(Handle h, Collection<String> pidIds) {
        var epochs = new HashMap<String, Long>();
        for (List<String> chunk : Rows.chunks(pidIds)) {
            Rows.bindAll(
                            h.createQuery("SELECT pid_id, leader_epoch FROM pool_assignment WHERE pid_id IN ("
                                    + Rows.params("p", chunk.size()) + ") FOR UPDATE"),
                            "p",
                            chunk)
                    .map((rs, ctx) -> epochs.put(rs.getString("pid_id"), rs.getLong("leader_epoch")))
                    .list();
        }
        return epochs;
    }

    private static PidPoolException fenced(String pidId, long stored, Epoch by) {
        return new PidPoolException(
                ErrorCode.FENCED,
                "epoch",
                String.format(
                        "assignment of %s was written by epoch %d; epoch %d is fenced off", pidId, stored, by.value()));
    }
}
