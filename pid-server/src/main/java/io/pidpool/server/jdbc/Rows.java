package io.pidpool.server.jdbc;

import io.pidpool.core.port.StorageLimits;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.StringJoiner;
import org.jdbi.v3.core.statement.SqlStatement;

/** Small helpers shared by the adapters: UTC timestamps, chunked IN lists. */
final class Rows {
    /** Largest IN list or JDBC batch sent at once. */
    static final int CHUNK = 500;

    private Rows() {}

    /** Instants are stored as UTC wall time with millisecond precision. */
    static LocalDateTime toDb(Instant instant) {
        return LocalDateTime.ofInstant(StorageLimits.stored(instant), ZoneOffset.UTC);
    }

    static Instant instant(ResultSet rs, String column) throws SQLException {
        return rs.getObject(column, LocalDateTime.class).toInstant(ZoneOffset.UTC);
    }

    static <T> List<List<T>> chunks(Collection<T> items) {
        var all = new ArrayList<>(items);
        var chunks = new ArrayList<List<T>>();
        for (int i = 0; i < all.size(); i += CHUNK) {
            chunks.add(all.subList(i, Math.min(all.size(), i + CHUNK)));
        }
        return chunks;
    }

    /** {@code :p0, :p1, ...} for an IN list of {@code n} values. */
    static String params(String prefix, int n) {
        var joiner = new StringJoiner(", ");
        for (int i = 0; i < n; i++) {
            joiner.add(":" + prefix + i);
        }
        return joiner.toString();
    }

    /** Binds {@code values} to the names made by {@link #params}. */
    static <S extends SqlStatement<S>> S bindAll(S statement, String prefix, List<?> values) {
        for (int i = 0; i < values.size(); i++) {
            statement.bind(prefix + i, values.get(i));
        }
        return statement;
    }
}
