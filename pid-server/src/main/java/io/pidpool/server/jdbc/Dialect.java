package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import java.util.Map;

/**
 * The databases PidPool runs on and the few things that differ between them: two schema
 * placeholders, the session settings applied to every pooled connection, and how their errors
 * read.
 */
public enum Dialect {
    /** H2 2.x in its default mode: the embedded standalone database and the always-on test target. */
    H2("TIMESTAMP(3)", "", "SET LOCK_TIMEOUT 10000"),
    POSTGRESQL("TIMESTAMP(3)", "", null),
    /** MariaDB 10.11 (MySQL 8 is expected to work through the same settings, but is not tested). */
    MARIADB(
            "DATETIME(3)",
            "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
            // strict mode on every server, whatever its default: a too-long value fails, never truncates
            "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, IF(@@SESSION.sql_mode = '', '', ','),"
                    + " 'STRICT_ALL_TABLES')");

    private static final int H2_TRANSACTION_SNAPSHOT = 6;

    private final String timestampType;
    private final String tableOptions;
    private final String connectionInitSql;

    Dialect(String timestampType, String tableOptions, String connectionInitSql) {
        this.timestampType = timestampType;
        this.tableOptions = tableOptions;
        this.connectionInitSql = connectionInitSql;
    }

    /** The dialect of a JDBC URL. */
    public static Dialect fromUrl(String url) {
        if (url != null) {
            if (url.startsWith("jdbc:h2:")) {
                return H2;
            } else if (url.startsWith("jdbc:postgresql:")) {
                return POSTGRESQL;
            } else if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:")) {
                return MARIADB;
            }
        }
        throw PidPoolException.invalid(
                "database.url",
                "database url must start with jdbc:h2:, jdbc:postgresql: or jdbc:mariadb:, was '%s'",
                url);
    }

    /** Values of the Flyway placeholders in {@code db/pidpool}. */
    Map<String, String> placeholders() {
        return Map.of("pidpool_timestamp", timestampType, "pidpool_table_options", tableOptions);
    }

    /**
     * The JDBC isolation level of a read-only transaction that must see one committed state across
     * several statements. PostgreSQL's and InnoDB's REPEATABLE READ take one snapshot for the whole
     * transaction; H2's REPEATABLE READ takes each table's snapshot when the transaction first reads
     * it, so a commit between two statements can show half of itself (a DEALED batch without its
     * results). H2's own SNAPSHOT level (JDBC value 6, {@code org.h2.engine.Constants
     * .TRANSACTION_SNAPSHOT}) snapshots every table at the first statement.
     */
    int snapshotIsolation() {
        return this == H2 ? H2_TRANSACTION_SNAPSHOT : java.sql.Connection.TRANSACTION_REPEATABLE_READ;
    }

    /** Run on every new pooled connection, or null. */
    String connectionInitSql() {
        return connectionInitSql;
    }
}
