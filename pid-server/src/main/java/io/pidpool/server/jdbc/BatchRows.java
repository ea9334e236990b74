package io.pidpool.server.jdbc;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.PreparedBatch;

/**
 * How a batch lies in its tables, both ways: its operations in {@code op_operation} (the columns of
 * every operation type), the PIDs each names in {@code op_pid} and their attributes in {@code
 * op_pid_attribute}, written in chunks parents first; read back with the {@code op_batch} header as
 * {@link BatchRecord}s. The transactions are the caller's ({@link JdbiOperationLog}).
 */
final class BatchRows {
    private BatchRows() {}

    /** Writes the operation, PID and attribute rows of batch {@code batchId}, whose header row exists. */
    static void insertOperations(Handle h, long batchId, List<Operation<SealedSecret>> operations) {
        PreparedBatch ops = h.prepareBatch("INSERT INTO op_operation (batch_id, op_index, op_type, module_key, servers,"
                + " monthly_demand, rebalance_delay_ms) VALUES (:id, :index, :type, :module, :servers, :demand,"
                + " :delay)");
        for (int i = 0; i < operations.size(); i++) {
            Operation<SealedSecret> op = operations.get(i);
            ModuleKey named = op.moduleNamed();
            String module = named == null ? null : named.toString();
            Integer servers = null;
            Long demand = null;
            Long delay = null;
            if (op instanceof Operation.SetServers<SealedSecret> set) {
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
            List<PidSpec<SealedSecret>> specs = op.specs(); // ADD and UPDATE: one per id; else none
            List<String> ids = op.pidIds();
            for (int p = 0; p < ids.size(); p++) {
                PidSpec<SealedSecret> spec = specs.isEmpty() ? null : specs.get(p);
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

    /** The batches with these ids, in the order given; absent ids are skipped. */
    static List<BatchRecord> load(Handle h, List<Long> ids) {
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
        var attributes = new HashMap<RowKey, Map<String, String>>();
        Rows.bindAll(
                        h.createQuery(
                                "SELECT batch_id, op_index, pid_index, attr_name, attr_value FROM op_pid_attribute"
                                        + " WHERE batch_id IN (" + in + ")"),
                        "b",
                        ids)
                .map((rs, ctx) -> attributes
                        .computeIfAbsent(
                                new RowKey(rs.getLong("batch_id"), rs.getInt("op_index"), rs.getInt("pid_index")),
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
                                            attributes.isEmpty()
                                                    ? Map.of()
                                                    : attributes.getOrDefault(new RowKey(batch, op, index), Map.of())));
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

    /** A PID row of a batch's operation: what its attributes are filed under while loading. */
    private record RowKey(long batch, int op, int index) {}

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
