package io.pidpool.server.jdbc;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.sql.SQLTransientException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jdbi.v3.core.ConnectionException;
import org.jdbi.v3.core.JdbiException;

/**
 * The one place where database failures become {@link PidPoolException}s.
 *
 * <ul>
 *   <li>unique key violated: {@code CONFLICT}
 *   <li>missing referenced row (unknown module, unknown deduction): {@code NOT_FOUND}
 *   <li>row still referenced: {@code CONFLICT}
 *   <li>CHECK violated, value too long / out of range / null: {@code INVALID_ARGUMENT}
 *   <li>no connection, pool exhausted, deadlock, lock timeout, serialization failure, and anything
 *       not recognised: {@code UNAVAILABLE} (retryable; {@link JdbiSession} itself retries a
 *       repository call that lost a deadlock)
 * </ul>
 *
 * <p>The field comes from the constraint name ({@link #FIELDS}), which PostgreSQL, H2 and MariaDB all
 * put in their messages, except MariaDB for primary keys (it says {@code 'PRIMARY'}): there the
 * caller's {@code duplicateField} is used. Messages name the constraint and SQLState but never copy
 * the database's text. The cause kept is the driver's SQLException, never Jdbi's wrapper; with
 * Jdbi's message rendering set to {@code SHORT_STATEMENT} and PostgreSQL's
 * {@code logServerErrorDetail=false} (both set by {@link Database}) no bound value, sealed secrets
 * included, reaches an exception message.
 */
final class SqlErrors {
    /** Constraint name (lower case) to the field of the port's input it guards. */
    static final Map<String, String> FIELDS = Map.ofEntries(
            Map.entry("pk_pool_module", "module"),
            Map.entry("ck_pool_module_servers", "servers"),
            Map.entry("ck_pool_module_demand", "monthlyDemand"),
            Map.entry("ck_pool_module_min", "minPerInstance"),
            Map.entry("pk_pool_module_weight", "instanceWeights"),
            Map.entry("fk_pool_module_weight_module", "module"),
            Map.entry("ck_pool_module_weight", "instanceWeights"),
            Map.entry("pk_pool_pid", "pid.id"),
            Map.entry("fk_pool_pid_module", "pid.module"),
            Map.entry("ck_pool_pid_quota", "pid.monthlyQuota"),
            Map.entry("ck_pool_pid_allowance", "pid.overageAllowance"),
            Map.entry("ck_pool_pid_status", "pid.status"),
            Map.entry("pk_pool_pid_attribute", "pid.attributes"),
            Map.entry("fk_pool_pid_attribute_pid", "pid.id"),
            Map.entry("pk_pool_assignment", "pid.id"),
            Map.entry("fk_pool_assignment_pid", "pid.id"),
            Map.entry("fk_pool_assignment_module", "module"),
            Map.entry("ck_pool_assignment_state", "state"),
            Map.entry("ck_pool_assignment_epoch", "epoch"),
            Map.entry("pk_pool_slot", "slot"),
            Map.entry("uq_pool_slot_instance", "instance"),
            Map.entry("fk_pool_slot_module", "module"),
            Map.entry("ck_pool_slot_index", "slot"),
            Map.entry("ck_pool_slot_epoch", "epoch"),
            Map.entry("pk_op_batch", "id"),
            Map.entry("pk_op_batch_key", "Idempotency-Key"),
            Map.entry("uq_op_batch_key_batch", "id"),
            Map.entry("fk_op_batch_key_batch", "id"),
            Map.entry("ck_op_batch_status", "status"),
            Map.entry("ck_op_batch_epoch", "epoch"),
            Map.entry("pk_op_operation", "operations"),
            Map.entry("fk_op_operation_batch", "id"),
            Map.entry("ck_op_operation_type", "operations"),
            Map.entry("ck_op_operation_index", "operations"),
            Map.entry("pk_op_pid", "operations"),
            Map.entry("fk_op_pid_operation", "operations"),
            Map.entry("ck_op_pid_quota", "pids.monthlyQuota"),
            Map.entry("ck_op_pid_allowance", "pids.overageAllowance"),
            Map.entry("pk_op_pid_attribute", "pids.attributes"),
            Map.entry("fk_op_pid_attribute_pid", "operations"),
            Map.entry("pk_audit_log", "id"),
            Map.entry("pk_usage_client", "clientId"),
            Map.entry("ck_usage_client_progress", "sequence"),
            Map.entry("pk_usage_sequence", "sequence"),
            Map.entry("fk_usage_sequence_client", "clientId"),
            Map.entry("ck_usage_sequence_seq", "sequence"),
            Map.entry("pk_usage_deduction", "deductionId"),
            Map.entry("fk_usage_deduction_sequence", "sequence"),
            Map.entry("ck_usage_deduction_amount", "amount"),
            Map.entry("ck_usage_deduction_refunded", "amount"),
            Map.entry("ck_usage_deduction_month", "month"),
            Map.entry("pk_usage_refund", "refundId"),
            Map.entry("fk_usage_refund_deduction", "deductionId"),
            Map.entry("fk_usage_refund_sequence", "sequence"),
            Map.entry("ck_usage_refund_amount", "amount"),
            Map.entry("ck_usage_refund_after", "amount"));

    /** Whole-word matchers, longest name first so {@code pk_pool_pid_attribute} beats {@code pk_pool_pid}. */
    private static final List<Map.Entry<String, Pattern>> MATCHERS = FIELDS.keySet().stream()
            .sorted(Comparator.comparingInt(String::length).reversed())
            .map(name -> Map.entry(name, Pattern.compile("(?<![a-z0-9_])" + name + "(?![a-z0-9_])")))
            .toList();

    /** Bounds the walk over causes and chained SQLExceptions. */
    private static final int MAX_CHAIN = 32;

    enum Kind {
        DUPLICATE,
        MISSING_PARENT,
        CHILD_EXISTS,
        CHECK,
        BAD_VALUE,
        /** Deadlock victim or serialization failure: the whole transaction was (or must be) rolled back. */
        DEADLOCK,
        /** Lock wait timed out, statement cancelled: the statement failed, the transaction may go on. */
        TRANSIENT,
        CONNECTION,
        OTHER
    }

    private final Dialect dialect;

    SqlErrors(Dialect dialect) {
        this.dialect = dialect;
    }

    /**
     * {@code failure} as callers of the ports see it: a {@link PidPoolException} unchanged, a
     * database failure translated, anything else (an exception from the caller's own work) unchanged.
     */
    RuntimeException translateOrPass(RuntimeException failure, String duplicateField) {
        if (failure instanceof PidPoolException) {
            return failure;
        }
        if (failure instanceof JdbiException || !sqlExceptions(failure).isEmpty()) {
            return translate(failure, duplicateField);
        }
        return failure;
    }

    /** Translates a database failure; {@code duplicateField} names the field of an unnamed unique key. */
    PidPoolException translate(Throwable failure, String duplicateField) {
        List<SQLException> chain = sqlExceptions(failure);
        String text = messages(failure).toLowerCase(Locale.ROOT);
        Kind kind = kindOf(failure);
        String constraint = constraintIn(text);
        String field = constraint == null ? null : FIELDS.get(constraint);
        String what = describe(chain, constraint);
        Throwable cause = chain.isEmpty() ? failure : chain.get(0);
        return switch (kind) {
            case DUPLICATE ->
                new PidPoolException(
                        ErrorCode.CONFLICT,
                        field != null ? field : duplicateField,
                        "already exists (" + what + ")",
                        cause);
            case MISSING_PARENT ->
                new PidPoolException(
                        ErrorCode.NOT_FOUND, field, "refers to a row that does not exist (" + what + ")", cause);
            case CHILD_EXISTS ->
                new PidPoolException(
                        ErrorCode.CONFLICT, field, "is still referenced by other rows (" + what + ")", cause);
            case CHECK ->
                new PidPoolException(
                        ErrorCode.INVALID_ARGUMENT, field, "breaks a rule of the store (" + what + ")", cause);
            case BAD_VALUE ->
                new PidPoolException(
                        ErrorCode.INVALID_ARGUMENT, field, "a value does not fit its column (" + what + ")", cause);
            case DEADLOCK, TRANSIENT ->
                new PidPoolException(
                        ErrorCode.UNAVAILABLE,
                        null,
                        "database busy (deadlock, lock timeout or serialization failure), try again (" + what + ")",
                        cause);
            case CONNECTION ->
                new PidPoolException(ErrorCode.UNAVAILABLE, null, "database unavailable (" + what + ")", cause);
            case OTHER ->
                new PidPoolException(ErrorCode.UNAVAILABLE, null, "unexpected database error (" + what + ")", cause);
        };
    }

    /** What went wrong, judged by the first SQLException of the chain that says something definite. */
    Kind kindOf(Throwable failure) {
        String text = messages(failure).toLowerCase(Locale.ROOT);
        Kind kind = sqlExceptions(failure).stream()
                .map(e -> classify(e, text))
                .filter(k -> k != Kind.OTHER)
                .findFirst()
                .orElse(null);
        if (kind != null) {
            return kind;
        }
        return failure instanceof ConnectionException || hasCause(failure, SQLTransientConnectionException.class)
                ? Kind.CONNECTION
                : Kind.OTHER;
    }

    Kind classify(SQLException e, String text) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        int code = e.getErrorCode();
        if (state.startsWith("08")
                || e instanceof SQLNonTransientConnectionException
                || e instanceof SQLTransientConnectionException
                || e instanceof SQLRecoverableException) {
            return Kind.CONNECTION;
        }
        Kind vendor =
                switch (dialect) {
                    case MARIADB ->
                        switch (code) {
                            case 1062, 1586 -> Kind.DUPLICATE;
                            case 1452, 1216 -> Kind.MISSING_PARENT;
                            case 1451, 1217 -> Kind.CHILD_EXISTS;
                            case 4025 -> Kind.CHECK;
                            case 1048, 1406, 1264, 1366, 1292 -> Kind.BAD_VALUE;
                            case 1213 -> Kind.DEADLOCK;
                            case 1205 -> Kind.TRANSIENT;
                            case 1040, 1927, 2006, 2013 -> Kind.CONNECTION;
                            default -> Kind.OTHER;
                        };
                    case H2 ->
                        switch (state) {
                            case "23505" -> Kind.DUPLICATE;
                            case "23506" -> Kind.MISSING_PARENT; // parent missing
                            case "23503" -> Kind.CHILD_EXISTS; // child exists
                            case "23513" -> Kind.CHECK;
                            case "40001" -> Kind.DEADLOCK;
                            case "HYT00" -> Kind.TRANSIENT; // lock timeout
                            default -> Kind.OTHER;
                        };
                    case POSTGRESQL ->
                        switch (state) {
                            case "23505" -> Kind.DUPLICATE;
                            case "23503" ->
                                text.contains("update or delete on table") || text.contains("still referenced")
                                        ? Kind.CHILD_EXISTS // a delete of a referenced parent
                                        : Kind.MISSING_PARENT;
                            case "23514" -> Kind.CHECK;
                            case "40001", "40P01" -> Kind.DEADLOCK;
                            case "55P03", "57014" -> Kind.TRANSIENT;
                            case "57P01", "57P02", "57P03", "53300" -> Kind.CONNECTION;
                            default -> Kind.OTHER;
                        };
                };
        if (vendor != Kind.OTHER) {
            return vendor;
        }
        if (state.equals("23502") || state.startsWith("22")) {
            return Kind.BAD_VALUE;
        }
        if (state.startsWith("40")) {
            return Kind.DEADLOCK;
        }
        if (e instanceof SQLTransientException || e instanceof SQLTimeoutException) {
            return Kind.TRANSIENT;
        }
        return Kind.OTHER;
    }

    /** The known constraint named in {@code lowerCaseText}, or null. */
    static String constraintIn(String lowerCaseText) {
        for (Map.Entry<String, Pattern> m : MATCHERS) {
            if (m.getValue().matcher(lowerCaseText).find()) {
                return m.getKey();
            }
        }
        return null;
    }

    /** Every SQLException among the causes of {@code failure} and their chained exceptions. */
    static List<SQLException> sqlExceptions(Throwable failure) {
        var found = new ArrayList<SQLException>();
        Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        var pending = new ArrayList<Throwable>();
        pending.add(failure);
        while (!pending.isEmpty() && seen.size() < MAX_CHAIN) {
            Throwable t = pending.remove(0);
            if (t == null || !seen.add(t)) {
                continue;
            }
            if (t instanceof SQLException sql) {
                found.add(sql);
                pending.add(sql.getNextException());
            }
            pending.add(t.getCause());
        }
        return found;
    }

    private static String messages(Throwable failure) {
        var text = new StringBuilder();
        Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t) && seen.size() < MAX_CHAIN; t = t.getCause()) {
            text.append(t.getMessage()).append('\n');
        }
        for (SQLException sql : sqlExceptions(failure)) {
            text.append(sql.getMessage()).append('\n');
        }
        return text.toString();
    }

    private static String describe(List<SQLException> chain, String constraint) {
        var what = new StringBuilder();
        if (constraint != null) {
            what.append("constraint ").append(constraint).append(", ");
        }
        if (chain.isEmpty()) {
            what.append("no SQLState");
        } else {
            SQLException first = chain.get(0);
            what.append("SQLState ")
                    .append(first.getSQLState())
                    .append(", vendor code ")
                    .append(first.getErrorCode());
        }
        return what.toString();
    }

    private static boolean hasCause(Throwable failure, Class<? extends Throwable> type) {
        Set<Throwable> seen = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t) && seen.size() < MAX_CHAIN; t = t.getCause()) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }
}
