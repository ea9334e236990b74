package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.ModuleKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jdbi.v3.core.Handle;

/**
 * Which modules had a PID enter or leave them since an instant, from the operation log ({@code
 * op_batch}/{@code op_operation}/{@code op_pid}): a PID's counter in Redis counts everything spent on
 * it this month, by whichever module held it, so the sum over a module's current PIDs is its real
 * usage only if no PID moved in or out (docs/usage-monitoring.md §2, "Module usage").
 *
 * <p>A move is a DEALED, successful MIGRATE, DELETE or ADD of a PID at or after {@code since} whose
 * previous placement (its latest earlier ADD or MIGRATE, at any time) was another module, or any
 * module for a DELETE: both modules count as changed.
 *
 * <p>Incremental, because the leader asks on every usage scan and a month's log grows with every
 * batch: the answer for one {@code since} is kept with the DEALED batches it has read, and a later
 * call replays only the PIDs of batches DEALED since (whatever their ids: a batch that commits late
 * is still new), each over its whole history. A change once seen stays in the answer. A call for
 * another {@code since} (a new month) starts again. Thread-safe.
 */
public final class JdbiModuleMoves {
    private static final String MOVE_TYPES = "('ADD', 'MIGRATE', 'DELETE')";

    private final JdbiSession session;
    // guarded by this
    private Instant since;
    private final Set<Long> readBatches = new HashSet<>();
    private final Set<ModuleKey> changed = new HashSet<>();

    JdbiModuleMoves(JdbiSession session) {
        this.session = session;
    }

    private record Row(String pid, long batch, int index, String type, String module, Instant at) {}

    /** The modules a PID entered or left at or after {@code since}. */
    public synchronized Set<ModuleKey> changedSince(Instant since) {
        Preconditions.requireNonNull(since, "since");
        if (!since.equals(this.since)) {
            this.since = since;
            readBatches.clear();
            changed.clear();
        }
        session.snapshot(h -> {
            List<Long> fresh = new ArrayList<>();
            for (long batch : h.createQuery(
                            "SELECT batch_id FROM op_batch WHERE status = 'DEALED'" + " AND updated_at >= :since")
                    .bind("since", Rows.toDb(since))
                    .mapTo(Long.class)
                    .list()) {
                if (!readBatches.contains(batch)) {
                    fresh.add(batch);
                }
            }
            Set<String> pids = new TreeSet<>();
            for (List<Long> chunk : Rows.chunks(fresh)) {
                pids.addAll(Rows.bindAll(
                                h.createQuery("SELECT DISTINCT p.pid_id FROM op_operation o"
                                        + " JOIN op_pid p ON p.batch_id = o.batch_id AND p.op_index = o.op_index"
                                        + " WHERE o.op_type IN " + MOVE_TYPES + " AND o.batch_id IN ("
                                        + Rows.params("b", chunk.size()) + ")"),
                                "b",
                                chunk)
                        .mapTo(String.class)
                        .list());
            }
            for (List<String> chunk : Rows.chunks(pids)) {
                replay(history(h, chunk), since);
            }
            readBatches.addAll(fresh);
            return null;
        });
        return Set.copyOf(changed);
    }

    /** Every successful move of these PIDs, each PID's in order. */
    private static List<Row> history(Handle h, List<String> pids) {
        return Rows.bindAll(
                        h.createQuery("SELECT p.pid_id, b.batch_id, o.op_index, o.op_type, o.module_key,"
                                + " b.updated_at FROM op_pid p"
                                + " JOIN op_operation o ON o.batch_id = p.batch_id AND o.op_index = p.op_index"
                                + " JOIN op_batch b ON b.batch_id = p.batch_id"
                                + " WHERE b.status = 'DEALED' AND (o.result_ok IS NULL OR o.result_ok = TRUE)"
                                + " AND o.op_type IN " + MOVE_TYPES + " AND p.pid_id IN ("
                                + Rows.params("p", pids.size()) + ")"
                                + " ORDER BY p.pid_id, b.batch_id, o.op_index"),
                        "p",
                        pids)
                .map((rs, ctx) -> new Row(
                        rs.getString("pid_id"),
                        rs.getLong("batch_id"),
                        rs.getInt("op_index"),
                        rs.getString("op_type"),
                        rs.getString("module_key"),
                        Rows.instant(rs, "updated_at")))
                .list();
    }

    private void replay(List<Row> rows, Instant since) {
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
    }
}
