package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.PendingEffect;
import io.pidpool.core.port.StorageLimits;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * {@link OperationLog} on tables {@code op_batch}, {@code op_operation}, {@code op_pid} and
 * {@code op_pid_attribute}: one row per batch, per operation, per PID named and per attribute, so
 * an operation is stored in columns rather than as an opaque document ({@link BatchRows}). A
 * transition locks the batch row, reloads the batch (or only its status and epoch, when the caller
 * holds the batch already: its operations never change) and lets {@link BatchRecord#transition}
 * decide, the same code the fake runs. Thread-safe.
 */
final class JdbiOperationLog implements OperationLog {
    private final JdbiSession session;
    private final Clock clock;

    JdbiOperationLog(JdbiSession session, Clock clock) {
        this.session = session;
        this.clock = clock;
    }

    @Override
    public void append(BatchRecord batch) {
        Preconditions.requireNonNull(batch, "batch");
        Preconditions.requireArgument(
                batch.status() == BatchStatus.PENDING && batch.epoch().equals(Epoch.NONE),
                "status",
                "a new batch must be PENDING without epoch, was %s at epoch %d",
                batch.status(),
                batch.epoch().value());
        long id = batch.id().value();
        session.write("id", h -> {
            boolean exists = h.createQuery("SELECT 1 FROM op_batch WHERE batch_id = :id")
                    .bind("id", id)
                    .mapTo(Integer.class)
                    .findOne()
                    .isPresent();
            if (exists) {
                throw PidPoolException.conflict("id", "batch %s already exists", batch.id());
            }
            h.createUpdate("INSERT INTO op_batch (batch_id, status, requested_by, leader_epoch, created_at, updated_at)"
                            + " VALUES (:id, :status, :by, :epoch, :created, :updated)")
                    .bind("id", id)
                    .bind("status", batch.status().name())
                    .bind("by", batch.requestedBy())
                    .bind("epoch", batch.epoch().value())
                    .bind("created", Rows.toDb(batch.createdAt()))
                    .bind("updated", Rows.toDb(batch.updatedAt()))
                    .execute();
            BatchRows.insertOperations(h, id, batch.operations());
            return null;
        });
    }

    @Override
    public void append(BatchRecord batch, BatchKey key) {
        Preconditions.requireNonNull(batch, "batch");
        Preconditions.requireNonNull(key, IdempotencyKey.FIELD);
        Preconditions.requireArgument(
                key.batch().equals(batch.id()) && key.requestedBy().equals(batch.requestedBy()),
                IdempotencyKey.FIELD,
                "the idempotency key must name batch %s of %s",
                batch.id(),
                batch.requestedBy());
        // MariaDB names every primary key PRIMARY: the field of a duplicate key is passed here
        session.write(IdempotencyKey.FIELD, h -> {
            append(batch);
            if (findKey(h, key.requestedBy(), key.key()).isPresent()) {
                throw PidPoolException.conflict(
                        IdempotencyKey.FIELD,
                        "%s %s of %s was used before",
                        IdempotencyKey.FIELD,
                        key.key(),
                        key.requestedBy());
            }
            // a concurrent submit with the same key waits on this row and then fails on the key
            h.createUpdate("INSERT INTO op_batch_key (requested_by, idem_key, fingerprint, batch_id)"
                            + " VALUES (:by, :key, :fingerprint, :batch)")
                    .bind("by", key.requestedBy())
                    .bind("key", key.key().value())
                    .bind("fingerprint", key.fingerprint())
                    .bind("batch", key.batch().value())
                    .execute();
            return null;
        });
    }

    @Override
    public Optional<BatchKey> findKey(String requestedBy, IdempotencyKey key) {
        Preconditions.requireNonNull(requestedBy, "requestedBy");
        Preconditions.requireNonNull(key, IdempotencyKey.FIELD);
        return session.read(h -> findKey(h, requestedBy, key));
    }

    private static Optional<BatchKey> findKey(Handle h, String requestedBy, IdempotencyKey key) {
        return h.createQuery("SELECT requested_by, idem_key, fingerprint, batch_id FROM op_batch_key"
                        + " WHERE requested_by = :by AND idem_key = :key")
                .bind("by", requestedBy)
                .bind("key", key.value())
                .map((rs, ctx) -> new BatchKey(
                        rs.getString("requested_by"),
                        new IdempotencyKey(rs.getString("idem_key")),
                        rs.getString("fingerprint"),
                        new BatchId(rs.getLong("batch_id"))))
                .findOne();
    }

    @Override
    public Optional<BatchRecord> find(BatchId id) {
        Preconditions.requireNonNull(id, "id");
        return session.snapshot(
                h -> BatchRows.load(h, List.of(id.value())).stream().findFirst());
    }

    @Override
    public Optional<BatchStatus> findStatus(BatchId id) {
        Preconditions.requireNonNull(id, "id");
        return session.read(h -> h.createQuery("SELECT status FROM op_batch WHERE batch_id = :id")
                .bind("id", id.value())
                .map((rs, ctx) -> BatchStatus.valueOf(rs.getString(1)))
                .findOne());
    }

    @Override
    public List<BatchRecord> findUnfinished(int limit) {
        StorageLimits.requireLimit(limit);
        return session.snapshot(h -> {
            List<Long> ids = unfinishedIds(h, limit);
            var batches = new ArrayList<BatchRecord>();
            for (List<Long> chunk : Rows.chunks(ids)) {
                batches.addAll(BatchRows.load(h, chunk));
            }
            return List.copyOf(batches);
        });
    }

    @Override
    public List<BatchId> findUnfinishedIds(int limit) {
        StorageLimits.requireLimit(limit);
        return session.snapshot(
                h -> unfinishedIds(h, limit).stream().map(BatchId::new).toList());
    }

    private static List<Long> unfinishedIds(Handle h, int limit) {
        return h.createQuery("SELECT batch_id FROM op_batch WHERE status IN ('PENDING', 'DEALING')"
                        + " ORDER BY batch_id FETCH FIRST " + limit + " ROWS ONLY")
                .mapTo(Long.class)
                .list();
    }

    /**
     * Reads the operations of the unfinished batches and, through the PID index, only the rows of the
     * PIDs asked about: a validator's question costs what it asks, not every row of every waiting batch.
     */
    @Override
    public List<PendingEffect> pendingEffects(Set<String> pidIds, int limit) {
        Preconditions.requireNonNull(pidIds, "pids");
        StorageLimits.requireLimit(limit);
        return session.snapshot(h -> {
            List<Long> ids = unfinishedIds(h, limit);
            if (ids.isEmpty()) {
                return List.of();
            }
            // batch -> operation index -> its type and module, then the asked-about PIDs it names
            var operations = new TreeMap<Long, TreeMap<Integer, PendingOp>>();
            for (List<Long> chunk : Rows.chunks(ids)) {
                Rows.bindAll(
                                h.createQuery("SELECT batch_id, op_index, op_type, module_key FROM op_operation"
                                        + " WHERE batch_id IN (" + Rows.params("b", chunk.size()) + ")"),
                                "b",
                                chunk)
                        .map((rs, ctx) -> operations
                                .computeIfAbsent(rs.getLong(1), b -> new TreeMap<>())
                                .put(
                                        rs.getInt(2),
                                        new PendingOp(OperationType.valueOf(rs.getString(3)), rs.getString(4))))
                        .list();
            }
            for (List<String> chunk : Rows.chunks(new ArrayList<>(pidIds))) {
                Rows.bindAll(
                                h.createQuery("SELECT p.batch_id, p.op_index, p.pid_index, p.pid_id FROM op_pid p"
                                        + " JOIN op_batch b ON b.batch_id = p.batch_id"
                                        + " WHERE b.status IN ('PENDING', 'DEALING') AND p.pid_id IN ("
                                        + Rows.params("p", chunk.size()) + ")"),
                                "p",
                                chunk)
                        .map((rs, ctx) -> {
                            var ops = operations.get(rs.getLong(1));
                            PendingOp op = ops == null ? null : ops.get(rs.getInt(2));
                            if (op != null) { // null: a batch beyond the limit
                                op.pids.put(rs.getInt(3), rs.getString(4));
                            }
                            return op;
                        })
                        .list();
            }
            var effects = new ArrayList<PendingEffect>();
            operations.values().forEach(ops -> ops.values()
                    .forEach(op -> effects.add(new PendingEffect(
                            op.type,
                            op.module == null ? null : ModuleKey.parse(op.module),
                            List.copyOf(op.pids.values())))));
            return effects;
        });
    }

    /** One operation of an unfinished batch as {@link #pendingEffects} gathers it. */
    private static final class PendingOp {
        final OperationType type;
        final String module;
        /** The asked-about PIDs by their index in the operation. */
        final TreeMap<Integer, String> pids = new TreeMap<>();

        PendingOp(OperationType type, String module) {
            this.type = type;
            this.module = module;
        }
    }

    @Override
    public List<BatchRecord> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return session.snapshot(h -> {
            List<Long> ids = h.createQuery(
                            "SELECT batch_id FROM op_batch ORDER BY batch_id DESC FETCH FIRST " + limit + " ROWS ONLY")
                    .mapTo(Long.class)
                    .list();
            var byId = new java.util.HashMap<Long, BatchRecord>();
            for (List<Long> chunk : Rows.chunks(ids)) {
                BatchRows.load(h, chunk).forEach(b -> byId.put(b.id().value(), b));
            }
            return ids.stream()
                    .map(byId::get)
                    .filter(java.util.Objects::nonNull)
                    .toList();
        });
    }

    @Override
    public BatchRecord transition(BatchId id, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        Preconditions.requireNonNull(id, "id");
        return session.write("id", h -> {
            lock(h, id);
            return move(h, BatchRows.load(h, List.of(id.value())).get(0), next, results, epoch);
        });
    }

    @Override
    public BatchRecord transition(BatchRecord known, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        Preconditions.requireNonNull(known, "known");
        return session.write("id", h -> {
            Moved stored = lock(h, known.id());
            // results are written only with a final status, so status and epoch say it all
            boolean current = stored.status() == known.status()
                    && stored.epoch() == known.epoch().value();
            BatchRecord batch = current
                    ? known
                    : BatchRows.load(h, List.of(known.id().value())).get(0);
            return move(h, batch, next, results, epoch);
        });
    }

    /** What a transition changes: the status and epoch (and, with a final status, the results). */
    private record Moved(BatchStatus status, long epoch) {}

    /** Locks the batch row to the end of the transaction and reads what transitions change. */
    private static Moved lock(Handle h, BatchId id) {
        return h.createQuery("SELECT status, leader_epoch FROM op_batch WHERE batch_id = :id FOR UPDATE")
                .bind("id", id.value())
                .map((rs, ctx) -> new Moved(BatchStatus.valueOf(rs.getString(1)), rs.getLong(2)))
                .findOne()
                .orElseThrow(() -> PidPoolException.notFound("id", "batch %s does not exist", id));
    }

    private BatchRecord move(
            Handle h, BatchRecord stored, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        long id = stored.id().value();
        BatchRecord moved = stored.transition(next, results, epoch, clock.instant());
        h.createUpdate("UPDATE op_batch SET status = :status, leader_epoch = :epoch, updated_at = :updated"
                        + " WHERE batch_id = :id")
                .bind("id", id)
                .bind("status", moved.status().name())
                .bind("epoch", moved.epoch().value())
                .bind("updated", Rows.toDb(moved.updatedAt()))
                .execute();
        if (!moved.results().isEmpty()) {
            PreparedBatch rows = h.prepareBatch("UPDATE op_operation SET result_ok = :ok, result_message = :message"
                    + " WHERE batch_id = :id AND op_index = :index");
            for (OperationResult r : moved.results()) {
                rows.bind("id", id)
                        .bind("index", r.index())
                        .bind("ok", r.ok())
                        .bind("message", r.message())
                        .add();
            }
            rows.execute();
        }
        return moved;
    }
}
