package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.ModuleKey;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which modules had a PID enter or leave them since an instant, from the operation log ({@code
 * op_batch}/{@code op_operation}/{@code op_pid}): a PID's counter in Redis counts everything spent on
 * it this month, by whichever module held it, so the sum over a module's current PIDs is its real
 * usage only if no PID moved in or out (docs/usage-monitoring.md §2, "Module usage").
 *
 * <p>A move is a DEALED, successful MIGRATE, DELETE or ADD of a PID at or after {@code since} whose
 * previous placement (its latest earlier ADD or MIGRATE, at any time) was another module, or any
 * module for a DELETE: both modules count as changed. One query over the PIDs touched since then.
 * Thread-safe.
 */
public final class JdbiModuleMoves {
    private final JdbiSession session;

    JdbiModuleMoves(JdbiSession session) {
        this.session = session;
    }

    private record Row(String pid, long batch, int index, String type, String module, Instant at) {}

    /** The modules a PID entered or left at or after {@code since}. */
    public Set<ModuleKey> changedSince(Instant since) {
        Preconditions.requireNonNull(since, "since");
        List<Row> rows = session.read(h -> h.createQuery("SELECT p.pid_id, b.batch_id, o.op_index, o.op_type,"
                        + " o.module_key, b.updated_at FROM op_batch b"
                        + " JOIN op_operation o ON o.batch_id = b.batch_id"
                        + " JOIN op_pid p ON p.batch_id = o.batch_id AND p.op_index = o.op_index"
                        + " WHERE b.status = 'DEALED' AND (o.result_ok IS NULL OR o.result_ok = TRUE)"
                        + " AND o.op_type IN ('ADD', 'MIGRATE', 'DELETE')"
                        + " AND p.pid_id IN (SELECT p2.pid_id FROM op_batch b2"
                        + "   JOIN op_operation o2 ON o2.batch_id = b2.batch_id"
                        + "   JOIN op_pid p2 ON p2.batch_id = o2.batch_id AND p2.op_index = o2.op_index"
                        + "   WHERE b2.status = 'DEALED' AND b2.updated_at >= :since"
                        + "   AND o2.op_type IN ('ADD', 'MIGRATE', 'DELETE'))"
                        + " ORDER BY p.pid_id, b.batch_id, o.op_index")
                .bind("since", Rows.toDb(since))
                .map((rs, ctx) -> new Row(
                        rs.getString("pid_id"),
                        rs.getLong("batch_id"),
                        rs.getInt("op_index"),
                        rs.getString("op_type"),
                        rs.getString("module_key"),
                        Rows.instant(rs, "updated_at")))
                .list());
        Set<ModuleKey> changed = new HashSet<>();
        Map<String, String> placed = new HashMap<>();
        for (Row r : rows) {
            String before = placed.get(r.pid());
            boolean recent = !r.at().isBefore(since);
            switch (r.type()) {
                case "DELETE" -> {
                    if (recent && before != null) {
                        changed.add(ModuleKey.parse(before));
                    }
                    placed.remove(r.pid());
                }
                default -> { // ADD, MIGRATE
                    if (recent && before != null && !before.equals(r.module())) {
                        changed.add(ModuleKey.parse(before));
                        changed.add(ModuleKey.parse(r.module()));
                    }
                    placed.put(r.pid(), r.module());
                }
            }
        }
        return changed;
    }
}
