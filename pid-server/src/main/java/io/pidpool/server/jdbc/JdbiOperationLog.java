package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.StorageLimits;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * {@link OperationLog} on tables {@code op_batch}, {@code op_operation}, {@code op_pid} and
 * {@code op_pid_attribute}: one row per batch, per operation, per PID named and per attribute, so
 * an operation is stored in columns rather than as an opaque document. A transition locks the batch
 * row, reloads the batch and lets {@link BatchRecord#transition} decide, the same code the fake
 * runs. Thread-safe.
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
            insertOperations(h, id, batch.operations());
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
        return session.snapshot(h -> load(h, List.of(id.value())).stream().findFirst());
    }

    @Override
    public List<BatchRecord> findUnfinished(int limit) {
        StorageLimits.requireLimit(limit);
        return session.snapshot(h -> {
            List<Long> ids = h.createQuery("SELECT batch_id FROM op_batch WHERE status IN ('PENDING', 'DEALING')"
                            + " ORDER BY batch_id FETCH FIRST " + limit + " ROWS ONLY")
                    .mapTo(Long.class)
                    .list();
            var batches = new ArrayList<BatchRecord>();
            for (List<Long> chunk : Rows.chunks(ids)) {
                batches.addAll(load(h, chunk));
            }
            return List.copyOf(batches);
        });
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
                load(h, chunk).forEach(b -> byId.put(b.id().value(), b));
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
            boolean exists = h.createQuery("SELECT batch_id FROM op_batch WHERE batch_id = :id FOR UPDATE")
                    .bind("id", id.value())
                    .mapTo(Long.class)
                    .findOne()
                    .isPresent();
            if (!exists) {
                throw PidPoolException.notFound("id", "batch %s does not exist", id);
            }
            BatchRecord stored = load(h, List.of(id.value())).get(0);
            BatchRecord moved = stored.transition(next, results, epoch, clock.instant());
            h.createUpdate("UPDATE op_batch SET status = :status, leader_epoch = :epoch, updated_at = :updated"
                            + " WHERE batch_id = :id")
                    .bind("id", id.value())
                    .bind("status", moved.status().name())
                    .bind("epoch", moved.epoch().value())
                    .bind("updated", Rows.toDb(moved.updatedAt()))
                    .execute();
            if (!moved.results().isEmpty()) {
                PreparedBatch rows = h.prepareBatch("UPDATE op_operation SET result_ok = :ok, result_message = :message"
                        + " WHERE batch_id = :id AND op_index = :index");
                for (OperationResult r : moved.results()) {
                    rows.bind("id", id.value())
                            .bind("index", r.index())
                            .bind("ok", r.ok())
                            .bind("message", r.message())
                            .add();
                }
                rows.execute();
            }
            return moved;
        });
    }

    private static void insertOperations(Handle h, long batchId, List<Operation<SealedSecret>> operations) {
        PreparedBatch ops = h.prepareBatch("INSERT INTO op_operation (batch_id, op_index, op_type, module_key, servers,"
                + " monthly_demand, rebalance_delay_ms) VALUES (:id, :index, :type, :module, :servers, :demand,"
                + " :delay)");
        for (int i = 0; i < operations.size(); i++) {
            Operation<SealedSecret> op = operations.get(i);
            String module = null;
            Integer servers = null;
            Long demand = null;
            Long delay = null;
            if (op instanceof Operation.Add<SealedSecret> add) {
                module = add.module().toString();
            } else if (op instanceof Operation.Migrate<SealedSecret> migrate) {
                module = migrate.to().toString();
            } else if (op instanceof Operation.SetServers<SealedSecret> set) {
                module = set.module().toString();
                servers = set.servers();
                demand = set.monthlyDemand();
                delay = set.rebalanceDelay() == null
                        ? null
                        : set.rebalanceDelay().toMillis();
            }
            ops.bind("id", batchId)
                    .bind("index", i)
                    .bind("type", op.type().name())
                    .bindByType("module", module, String.class)
                    .bindByType("servers", servers, Integer.class)
                    .bindByType("demand", demand, Long.class)
                    .bindByType("delay", delay, Long.class)
                    .add();
        }
        ops.execute(); // parents first: the foreign keys check each row as it goes in
        PreparedBatch pids = h.prepareBatch("INSERT INTO op_pid (batch_id, op_index, pid_index, pid_id, sealed_secret,"
                + " monthly_quota, overage_allowance) VALUES (:id, :op, :index, :pid, :secret, :quota, :allowance)");
        PreparedBatch attributes = h.prepareBatch("INSERT INTO op_pid_attribute (batch_id, op_index, pid_index,"
                + " attr_name, attr_value) VALUES (:id, :op, :index, :name, :value)");
        for (int i = 0; i < operations.size(); i++) {
            Operation<SealedSecret> op = operations.get(i);
            List<PidSpec<SealedSecret>> specs = specs(op);
            List<String> ids = op.pidIds();
            for (int p = 0; p < ids.size(); p++) {
                PidSpec<SealedSecret> spec = specs == null ? null : specs.get(p);
                pids.bind("id", batchId)
                        .bind("op", i)
                        .bind("index", p)
                        .bind("pid", ids.get(p))
                        .bindByType(
                                "secret",
                                spec == null || spec.secret() == null
                                        ? null
                                        : spec.secret().encode(),
                                String.class)
                        .bindByType("quota", spec == null ? null : spec.monthlyQuota(), Long.class)
                        .bindByType("allowance", spec == null ? null : spec.overageAllowance(), Long.class)
                        .add();
                if (pids.size() >= Rows.CHUNK) {
                    pids.execute();
                }
                if (spec == null) {
                    continue;
                }
                for (Map.Entry<String, String> attribute : spec.attributes().entrySet()) {
                    attributes
                            .bind("id", batchId)
                            .bind("op", i)
                            .bind("index", p)
                            .bind("name", attribute.getKey())
                            .bind("value", attribute.getValue())
                            .add();
                    if (attributes.size() >= Rows.CHUNK) {
                        flush(pids); // an attribute row needs its PID row in first
                        attributes.execute();
                    }
                }
            }
        }
        flush(pids);
        flush(attributes);
    }

    private static void flush(PreparedBatch batch) {
        if (batch.size() > 0) {
            batch.execute();
        }
    }

    private static List<PidSpec<SealedSecret>> specs(Operation<SealedSecret> op) {
        if (op instanceof Operation.Add<SealedSecret> add) {
            return add.pids();
        } else if (op instanceof Operation.Update<SealedSecret> update) {
            return update.pids();
        }
        return null;
    }

    /** The batches with these ids, in the order given; absent ids are skipped. */
    private static List<BatchRecord> load(Handle h, List<Long> ids) {
        if (ids.isEmpty()) {
            return List.of();
        }
        String in = Rows.params("b", ids.size());
        // The header and the operations with their results come from ONE statement: the leader
        // writes status and results in one transaction, and only a single statement is promised one
        // committed state on every database (H2 once showed a DEALED header next to operation rows
        // from before that commit when the two were read by consecutive statements of a READ
        // COMMITTED transaction). The PID rows read after it never change once their batch exists.
        var headers = new HashMap<Long, Header>();
        var operations = new HashMap<Long, TreeMap<Integer, OpRow>>();
        Rows.bindAll(
                        h.createQuery("SELECT b.batch_id, b.status, b.requested_by, b.leader_epoch, b.created_at,"
                                + " b.updated_at, o.op_index, o.op_type, o.module_key, o.servers, o.monthly_demand,"
                                + " o.rebalance_delay_ms, o.result_ok, o.result_message FROM op_batch b"
                                + " LEFT JOIN op_operation o ON o.batch_id = b.batch_id"
                                + " WHERE b.batch_id IN (" + in + ")"),
                        "b",
                        ids)
                .map((rs, ctx) -> {
                    long batch = rs.getLong("batch_id");
                    if (!headers.containsKey(batch)) {
                        headers.put(batch, header(rs));
                    }
                    String type = rs.getString("op_type");
                    if (type == null) {
                        return batch; // a batch without operations (LEFT JOIN)
                    }
                    int index = rs.getInt("op_index");
                    Long delay = rs.getObject("rebalance_delay_ms", Long.class);
                    boolean ok = rs.getBoolean("result_ok");
                    OperationResult result =
                            rs.wasNull() ? null : new OperationResult(index, ok, rs.getString("result_message"));
                    operations
                            .computeIfAbsent(batch, b -> new TreeMap<>())
                            .put(
                                    index,
                                    new OpRow(
                                            OperationType.valueOf(type),
                                            rs.getString("module_key"),
                                            rs.getInt("servers"),
                                            rs.getLong("monthly_demand"),
                                            delay == null ? null : Duration.ofMillis(delay),
                                            result));
                    return batch;
                })
                .list();
        var attributes = new HashMap<String, Map<String, String>>();
        Rows.bindAll(
                        h.createQuery(
                                "SELECT batch_id, op_index, pid_index, attr_name, attr_value FROM op_pid_attribute"
                                        + " WHERE batch_id IN (" + in + ")"),
                        "b",
                        ids)
                .map((rs, ctx) -> attributes
                        .computeIfAbsent(
                                key(rs.getLong("batch_id"), rs.getInt("op_index"), rs.getInt("pid_index")),
                                k -> new HashMap<>())
                        .put(rs.getString("attr_name"), rs.getString("attr_value")))
                .list();
        // batch -> operation -> PID rows, each in index order
        var pids = new HashMap<Long, Map<Integer, TreeMap<Integer, PidRow>>>();
        Rows.bindAll(
                        h.createQuery("SELECT batch_id, op_index, pid_index, pid_id, sealed_secret, monthly_quota,"
                                + " overage_allowance FROM op_pid WHERE batch_id IN (" + in + ")"),
                        "b",
                        ids)
                .map((rs, ctx) -> {
                    long batch = rs.getLong("batch_id");
                    int op = rs.getInt("op_index");
                    int index = rs.getInt("pid_index");
                    String secret = rs.getString("sealed_secret");
                    long quota = rs.getLong("monthly_quota");
                    boolean hasSpec = !rs.wasNull(); // ADD and UPDATE rows carry a quota, others not
                    long allowance = rs.getLong("overage_allowance");
                    var row = new PidRow(
                            rs.getString("pid_id"),
                            !hasSpec
                                    ? null
                                    : new PidSpec<>(
                                            rs.getString("pid_id"),
                                            secret == null ? null : SealedSecret.decode(secret),
                                            quota,
                                            allowance,
                                            attributes.getOrDefault(key(batch, op, index), Map.of())));
                    return pids.computeIfAbsent(batch, b -> new HashMap<>())
                            .computeIfAbsent(op, o -> new TreeMap<>())
                            .put(index, row);
                })
                .list();
        var batches = new HashMap<Long, BatchRecord>();
        headers.forEach((batch, header) -> {
            var ops = new ArrayList<Operation<SealedSecret>>();
            var results = new ArrayList<OperationResult>();
            operations.getOrDefault(batch, new TreeMap<>()).forEach((index, op) -> {
                var rows = pids.getOrDefault(batch, Map.of()).getOrDefault(index, new TreeMap<>());
                ops.add(op.decode(new ArrayList<>(rows.values())));
                if (op.result() != null && header.status().isFinal()) {
                    results.add(op.result());
                }
            });
            batches.put(
                    batch,
                    new BatchRecord(
                            new BatchId(batch),
                            ops,
                            header.status(),
                            header.requestedBy(),
                            header.createdAt(),
                            header.updatedAt(),
                            header.epoch(),
                            results));
        });
        return ids.stream().map(batches::get).filter(b -> b != null).toList();
    }

    private static String key(long batch, int op, int index) {
        return batch + "/" + op + "/" + index;
    }

    private static Header header(ResultSet rs) throws SQLException {
        return new Header(
                BatchStatus.valueOf(rs.getString("status")),
                rs.getString("requested_by"),
                new Epoch(rs.getLong("leader_epoch")),
                Rows.instant(rs, "created_at"),
                Rows.instant(rs, "updated_at"));
    }

    private record Header(BatchStatus status, String requestedBy, Epoch epoch, Instant createdAt, Instant updatedAt) {}

    private record PidRow(String id, PidSpec<SealedSecret> spec) {}

    private record OpRow(
            OperationType type,
            String module,
            int servers,
            long demand,
            java.time.Duration rebalanceDelay,
            OperationResult result) {
        Operation<SealedSecret> decode(List<PidRow> pids) {
            List<String> ids = pids.stream().map(PidRow::id).toList();
            List<PidSpec<SealedSecret>> specs = pids.stream().map(PidRow::spec).toList();
            return switch (type) {
                case ADD -> new Operation.Add<>(ModuleKey.parse(module), specs);
                case UPDATE -> new Operation.Update<>(specs);
                case DELETE -> new Operation.Delete<>(ids);
                case MIGRATE -> new Operation.Migrate<>(ids, ModuleKey.parse(module));
                case RESET_QUOTA -> new Operation.ResetQuota<>(ids);
                case SET_SERVERS ->
                    new Operation.SetServers<>(ModuleKey.parse(module), servers, demand, rebalanceDelay);
            };
        }
    }
}
