package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.worker.task.SlotPredicates.rangeIndex;
import static io.pidpool.worker.task.SlotPredicates.rangeParams;
import static io.pidpool.worker.task.SlotPredicates.rangePredicate;
import static io.pidpool.worker.task.SlotPredicates.selectionPredicate;
import static io.pidpool.worker.task.SlotPredicates.typePredicate;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.ring.SlotRange;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jdbi.v3.core.statement.StatementContext;

/**
 * {@link TaskStore} on the {@value TaskSchema#TASK_TABLE} table through Jdbi; portable SQL for H2,
 * PostgreSQL and MariaDB/MySQL. Each method is one short autocommit statement or one transaction;
 * the claim is a single conditional {@code UPDATE ... WHERE id IN (...) AND status = 'PENDING'}
 * followed by a primary-key read of the rows it won. The slot and type predicates are built by
 * {@link SlotPredicates}; deadlock victims are repeated by {@link RetryingJdbi}.
 *
 * <p>Thread-safe (Jdbi opens a handle per call).
 */
public final class JdbiTaskStore implements TaskStore {
    private static final String COLUMNS = "id, task_group, slot, task_type, task_key, body, status, attempts,"
            + " max_attempts, next_attempt_at_ms, lease_until_ms, owner_id, claim_id, last_error,"
            + " created_at_ms, updated_at_ms";
    private static final String TABLE = TaskSchema.TASK_TABLE;

    private final RetryingJdbi jdbi;

    public JdbiTaskStore(Jdbi jdbi) {
        this.jdbi = new RetryingJdbi(requireNonNull(jdbi, "jdbi"));
    }

    /** A store on {@code dataSource}; run {@link TaskSchema#migrate} first. */
    public static JdbiTaskStore create(DataSource dataSource) {
        return new JdbiTaskStore(Jdbi.create(requireNonNull(dataSource, "dataSource")));
    }

    @Override
    public long enqueue(NewTask task, Instant now) {
        return enqueueAll(List.of(task), now).get(0);
    }

    @Override
    public List<Long> enqueueAll(List<NewTask> tasks, Instant now) {
        requireNonNull(tasks, "tasks");
        if (tasks.isEmpty()) {
            return List.of();
        }
        long nowMs = now.toEpochMilli();
        return jdbi.inTransaction(h -> {
            PreparedBatch batch = h.prepareBatch("INSERT INTO " + TABLE
                    + " (task_group, slot, task_type, task_key, body, status, attempts, max_attempts,"
                    + " next_attempt_at_ms, lease_until_ms, claim_id, created_at_ms, updated_at_ms)"
                    + " VALUES (:group, :slot, :type, :key, :body, 'PENDING', 0, :max, :next, 0, 0, :now, :now)");
            for (NewTask t : tasks) {
                batch.bind("group", t.group())
                        .bind("slot", t.slot())
                        .bind("type", t.type())
                        .bind("key", t.key())
                        .bind("body", t.body())
                        .bind("max", t.maxAttempts())
                        .bind("next", t.notBefore().map(Instant::toEpochMilli).orElse(nowMs))
                        .bind("now", nowMs)
                        .add();
            }
            List<Long> ids = batch.executePreparedBatch("id").mapTo(Long.class).list();
            if (ids.size() != tasks.size()) {
                throw PidPoolException.illegalState("inserted %d tasks but got %d ids", tasks.size(), ids.size());
            }
            return ids;
        });
    }

    @Override
    public List<Task> findPending(String group, List<TypedRanges> selection, Instant now, int limit) {
        requireArgument(limit > 0, "limit", "limit must be positive, was %d", limit);
        List<TypedRanges> nonEmpty =
                selection.stream().filter(t -> !t.ranges().isEmpty()).toList();
        if (nonEmpty.isEmpty()) {
            return List.of();
        }
        Map<String, Object> params = new HashMap<>();
        String predicate = selectionPredicate(nonEmpty, params);
        // the fetch index (task_group, status, id) is walked in id order; type and slot are checked
        // on each entry's row, like the slot alone was before types (docs/worker.md §3)
        return jdbi.withHandle(h -> h.createQuery("SELECT " + COLUMNS + " FROM " + TABLE
                        + " WHERE task_group = :group AND status = 'PENDING' AND next_attempt_at_ms <= :now AND "
                        + predicate + " ORDER BY id LIMIT :limit")
                .bind("group", group)
                .bind("now", now.toEpochMilli())
                .bind("limit", limit)
                .bindMap(params)
                .map(JdbiTaskStore::mapTask)
                .list());
    }

    @Override
    public List<Task> claim(Collection<Long> ids, Claim claim) {
        if (ids.isEmpty()) {
            return List.of();
        }
        return jdbi.withHandle(h -> {
            int won = h.createUpdate(
                            "UPDATE " + TABLE + " SET status = 'RUNNING', owner_id = :owner, claim_id = :claim,"
                                    + " lease_until_ms = :lease, attempts = attempts + 1, updated_at_ms = :now"
                                    + " WHERE id IN (<ids>) AND status = 'PENDING'")
                    .bind("owner", claim.owner())
                    .bind("claim", claim.claimId())
                    .bind("lease", claim.leaseUntil().toEpochMilli())
                    .bind("now", claim.now().toEpochMilli())
                    .bindList("ids", List.copyOf(ids))
                    .execute();
            if (won == 0) {
                return List.of();
            }
            return h.createQuery("SELECT " + COLUMNS + " FROM " + TABLE
                            + " WHERE id IN (<ids>) AND claim_id = :claim AND status = 'RUNNING' ORDER BY id")
                    .bindList("ids", List.copyOf(ids))
                    .bind("claim", claim.claimId())
                    .map(JdbiTaskStore::mapTask)
                    .list();
        });
    }

    @Override
    public int complete(long claimId, Collection<Long> ids, Instant now) {
        if (ids.isEmpty()) {
            return 0;
        }
        return jdbi.withHandle(h -> h.createUpdate("UPDATE " + TABLE
                        + " SET status = 'DONE', lease_until_ms = 0, updated_at_ms = :now"
                        + " WHERE id IN (<ids>) AND claim_id = :claim AND status = 'RUNNING'")
                .bind("now", now.toEpochMilli())
                .bind("claim", claimId)
                .bindList("ids", List.copyOf(ids))
                .execute());
    }

    @Override
    public int fail(long claimId, List<Failure> failures, Instant now) {
        if (failures.isEmpty()) {
            return 0;
        }
        return jdbi.inTransaction(h -> {
            PreparedBatch batch = h.prepareBatch("UPDATE " + TABLE
                    + " SET status = :status, next_attempt_at_ms = :next, last_error = :error, lease_until_ms = 0,"
                    + " updated_at_ms = :now WHERE id = :id AND claim_id = :claim AND status = 'RUNNING'");
            for (Failure f : failures) {
                batch.bind("status", f.retryAt().isPresent() ? "PENDING" : "FAILED")
                        .bind("next", f.retryAt().map(Instant::toEpochMilli).orElse(now.toEpochMilli()))
                        .bind("error", f.error())
                        .bind("now", now.toEpochMilli())
                        .bind("id", f.id())
                        .bind("claim", claimId)
                        .add();
            }
            return sum(batch.execute());
        });
    }

    @Override
    public int release(long claimId, Collection<Long> ids, Instant now) {
        if (ids.isEmpty()) {
            return 0;
        }
        return jdbi.withHandle(h -> h.createUpdate("UPDATE " + TABLE
                        + " SET status = 'PENDING', attempts = attempts - 1, owner_id = NULL, claim_id = 0,"
                        + " lease_until_ms = 0, next_attempt_at_ms = :now, updated_at_ms = :now"
                        + " WHERE id IN (<ids>) AND claim_id = :claim AND status = 'RUNNING'")
                .bind("now", now.toEpochMilli())
                .bind("claim", claimId)
                .bindList("ids", List.copyOf(ids))
                .execute());
    }

    @Override
    public ReapResult reapExpiredLeases(String group, Instant now) {
        long nowMs = now.toEpochMilli();
        // find first (a plain read), then update by primary key: an UPDATE that scanned the status
        // index would lock index ranges and deadlock with claims on MariaDB
        List<Long> expired = jdbi.withHandle(h -> h.createQuery("SELECT id FROM " + TABLE
                        + " WHERE task_group = :group AND status = 'RUNNING' AND lease_until_ms < :now ORDER BY id")
                .bind("group", group)
                .bind("now", nowMs)
                .mapTo(Long.class)
                .list());
        if (expired.isEmpty()) {
            return ReapResult.NONE;
        }
        return jdbi.inTransaction(h -> {
            int failed = h.createUpdate("UPDATE " + TABLE
                            + " SET status = 'FAILED', last_error = CONCAT('lease of ', owner_id, ' expired on the last attempt'),"
                            + " lease_until_ms = 0, updated_at_ms = :now"
                            + " WHERE id IN (<ids>) AND status = 'RUNNING' AND lease_until_ms < :now"
                            + " AND attempts >= max_attempts")
                    .bindList("ids", expired)
                    .bind("now", nowMs)
                    .execute();
            int returned = h.createUpdate("UPDATE " + TABLE
                            + " SET status = 'PENDING', last_error = CONCAT('lease of ', owner_id, ' expired'),"
                            + " owner_id = NULL, claim_id = 0, lease_until_ms = 0, next_attempt_at_ms = :now,"
                            + " updated_at_ms = :now"
                            + " WHERE id IN (<ids>) AND status = 'RUNNING' AND lease_until_ms < :now")
                    .bindList("ids", expired)
                    .bind("now", nowMs)
                    .execute();
            return returned == 0 && failed == 0 ? ReapResult.NONE : new ReapResult(returned, failed);
        });
    }

    @Override
    public Map<SlotRange, Long> countPending(String group, List<SlotRange> ranges) {
        return countPending(group, null, ranges);
    }

    @Override
    public Map<SlotRange, Long> countPending(String group, TypedRanges selection) {
        return countPending(group, selection.types(), selection.ranges());
    }

    @Override
    public Map<String, Long> countPendingByType(String group) {
        Map<String, Long> out = new TreeMap<>();
        jdbi.withHandle(h -> h.createQuery("SELECT task_type, COUNT(*) AS n FROM " + TABLE
                                + " WHERE task_group = :group AND status = 'PENDING' GROUP BY task_type")
                        .bind("group", group)
                        .map((rs, ctx) -> Map.entry(rs.getString("task_type"), rs.getLong("n")))
                        .list())
                .forEach(e -> out.put(e.getKey(), e.getValue()));
        return out;
    }

    /** PENDING per range; {@code types == null}: every type. */
    private Map<SlotRange, Long> countPending(String group, Set<String> types, List<SlotRange> ranges) {
        Map<SlotRange, Long> out = new LinkedHashMap<>();
        ranges.forEach(r -> out.put(r, 0L));
        if (ranges.isEmpty()) {
            return out;
        }
        String which = rangeIndex(ranges);
        Map<String, Object> params = new HashMap<>(rangeParams(ranges));
        String typeFilter = types == null ? "" : typePredicate("t", types, params) + " AND ";
        jdbi.withHandle(h -> h.createQuery("SELECT r, COUNT(*) AS n FROM (SELECT " + which + " AS r FROM " + TABLE
                                + " WHERE task_group = :group AND status = 'PENDING' AND " + typeFilter
                                + rangePredicate(ranges) + ") counted GROUP BY r")
                        .bind("group", group)
                        .bindMap(params)
                        .map((rs, ctx) -> Map.entry(rs.getInt("r"), rs.getLong("n")))
                        .list())
                .forEach(e -> out.merge(ranges.get(e.getKey()), e.getValue(), Long::sum));
        return out;
    }

    @Override
    public Map<TaskStatus, Long> countByStatus(String group) {
        return jdbi.withHandle(h -> {
            Map<TaskStatus, Long> out = new EnumMap<>(TaskStatus.class);
            h.createQuery("SELECT status, COUNT(*) AS n FROM " + TABLE + " WHERE task_group = :group GROUP BY status")
                    .bind("group", group)
                    .map((rs, ctx) -> Map.entry(TaskStatus.valueOf(rs.getString("status")), rs.getLong("n")))
                    .forEach(e -> out.put(e.getKey(), e.getValue()));
            return out;
        });
    }

    @Override
    public Optional<Task> find(long id) {
        return jdbi.withHandle(h -> h.createQuery("SELECT " + COLUMNS + " FROM " + TABLE + " WHERE id = :id")
                .bind("id", id)
                .map(JdbiTaskStore::mapTask)
                .findOne());
    }

    @Override
    public int purgeDone(String group, Instant olderThan, int limit) {
        requireArgument(limit > 0, "limit", "limit must be positive, was %d", limit);
        return jdbi.withHandle(h -> {
            // two steps: PostgreSQL has no DELETE ... LIMIT, MariaDB no LIMIT inside IN (subquery)
            List<Long> ids = h.createQuery("SELECT id FROM " + TABLE
                            + " WHERE task_group = :group AND status = 'DONE' AND updated_at_ms < :before"
                            + " ORDER BY id LIMIT :limit")
                    .bind("group", group)
                    .bind("before", olderThan.toEpochMilli())
                    .bind("limit", limit)
                    .mapTo(Long.class)
                    .list();
            if (ids.isEmpty()) {
                return 0;
            }
            return h.createUpdate("DELETE FROM " + TABLE + " WHERE id IN (<ids>) AND status = 'DONE'")
                    .bindList("ids", ids)
                    .execute();
        });
    }

    private static int sum(int[] counts) {
        int total = 0;
        for (int c : counts) {
            // some drivers report SUCCESS_NO_INFO (-2) for batched statements
            total += Math.max(c, 0);
        }
        return total;
    }

    private static Task mapTask(ResultSet rs, StatementContext ctx) throws SQLException {
        return new Task(
                rs.getLong("id"),
                rs.getString("task_group"),
                rs.getLong("slot"),
                rs.getString("task_type"),
                rs.getString("task_key"),
                rs.getString("body"),
                TaskStatus.valueOf(rs.getString("status")),
                rs.getInt("attempts"),
                rs.getInt("max_attempts"),
                rs.getLong("next_attempt_at_ms"),
                rs.getLong("lease_until_ms"),
                rs.getString("owner_id"),
                rs.getLong("claim_id"),
                rs.getString("last_error"),
                rs.getLong("created_at_ms"),
                rs.getLong("updated_at_ms"));
    }
}
