package io.pidpool.worker.task;

import io.pidpool.core.ring.SlotRange;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The SQL predicates that select tasks by slot range and type, each with the named parameters it
 * binds. Portable across H2, PostgreSQL and MariaDB/MySQL: plain comparisons and {@code IN} lists,
 * one parameter per bound, so the statement's text depends only on the selection's shape.
 */
final class SlotPredicates {
    private SlotPredicates() {}

    /** {@code ((slot >= :s0 AND slot < :e0) OR ...)}; bind with {@link #rangeParams(List)}. */
    static String rangePredicate(List<SlotRange> ranges) {
        return rangePredicate("", ranges);
    }

    /** {@code ((slot >= :<p>s0 AND slot < :<p>e0) OR ...)}. */
    static String rangePredicate(String prefix, List<SlotRange> ranges) {
        StringBuilder sql = new StringBuilder("(");
        for (int i = 0; i < ranges.size(); i++) {
            if (i > 0) {
                sql.append(" OR ");
            }
            sql.append("(slot >= :")
                    .append(prefix)
                    .append('s')
                    .append(i)
                    .append(" AND slot < :")
                    .append(prefix)
                    .append('e')
                    .append(i)
                    .append(')');
        }
        return sql.append(')').toString();
    }

    static Map<String, Object> rangeParams(List<SlotRange> ranges) {
        return rangeParams("", ranges);
    }

    static Map<String, Object> rangeParams(String prefix, List<SlotRange> ranges) {
        Map<String, Object> params = new HashMap<>();
        for (int i = 0; i < ranges.size(); i++) {
            params.put(prefix + "s" + i, ranges.get(i).start());
            params.put(prefix + "e" + i, ranges.get(i).end());
        }
        return params;
    }

    /**
     * {@code CASE WHEN slot >= :s0 AND slot < :e0 THEN 0 ... END}: the index of a row's range, for
     * counting per range in one statement; binds like {@link #rangePredicate(List)}.
     */
    static String rangeIndex(List<SlotRange> ranges) {
        StringBuilder which = new StringBuilder("CASE");
        for (int i = 0; i < ranges.size(); i++) {
            which.append(" WHEN slot >= :s")
                    .append(i)
                    .append(" AND slot < :e")
                    .append(i)
                    .append(" THEN ")
                    .append(i);
        }
        return which.append(" END").toString();
    }

    /** {@code task_type IN (:<p>0, ...)}, binding the types into {@code params}. */
    static String typePredicate(String prefix, Set<String> types, Map<String, Object> params) {
        StringBuilder sql = new StringBuilder("task_type IN (");
        int i = 0;
        for (String t : types) {
            if (i > 0) {
                sql.append(", ");
            }
            sql.append(':').append(prefix).append(i);
            params.put(prefix + i, t);
            i++;
        }
        return sql.append(')').toString();
    }

    /** {@code ((task_type IN (...) AND (ranges)) OR ...)} over every entry of {@code selection}. */
    static String selectionPredicate(List<TypedRanges> selection, Map<String, Object> params) {
        StringBuilder sql = new StringBuilder("(");
        for (int i = 0; i < selection.size(); i++) {
            TypedRanges t = selection.get(i);
            if (i > 0) {
                sql.append(" OR ");
            }
            sql.append('(')
                    .append(typePredicate("t" + i + "_", t.types(), params))
                    .append(" AND ")
                    .append(rangePredicate("r" + i + "_", t.ranges()))
                    .append(')');
            params.putAll(rangeParams("r" + i + "_", t.ranges()));
        }
        return sql.append(')').toString();
    }
}
