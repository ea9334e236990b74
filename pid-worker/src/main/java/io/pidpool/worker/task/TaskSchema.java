package io.pidpool.worker.task;

import io.pidpool.core.error.PidPoolException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;

/**
 * Creates and upgrades the task table with Flyway. The worker keeps its own history table,
 * {@value #HISTORY_TABLE}, so it can share a database (and schema) with pid-server's tables,
 * which Flyway tracks separately.
 */
public final class TaskSchema {
    /** Flyway history table of the worker's migrations. */
    public static final String HISTORY_TABLE = "pidpool_worker_schema_history";
    /** The task table. */
    public static final String TASK_TABLE = "pidpool_task";

    private TaskSchema() {}

    /** Applies pending migrations for the database behind {@code dataSource}; returns how many ran. */
    public static int migrate(DataSource dataSource) {
        String vendor = vendor(dataSource);
        try {
            return Flyway.configure(TaskSchema.class.getClassLoader())
                    .dataSource(dataSource)
                    .table(HISTORY_TABLE)
                    .locations("classpath:db/worker/" + vendor)
                    // another tool's tables may live in the same schema already
                    .baselineOnMigrate(true)
                    .baselineVersion("0")
                    .load()
                    .migrate()
                    .migrationsExecuted;
        } catch (FlywayException e) {
            throw PidPoolException.unavailable("task table migration failed: " + e.getMessage(), e);
        }
    }

    /** The migration folder for the database: {@code h2}, {@code postgresql} or {@code mariadb}. */
    static String vendor(DataSource dataSource) {
        String product;
        try (Connection c = dataSource.getConnection()) {
            product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
        } catch (SQLException e) {
            throw PidPoolException.unavailable("cannot reach the task database: " + e.getMessage(), e);
        }
        if (product.contains("h2")) {
            return "h2";
        }
        if (product.contains("postgres")) {
            return "postgresql";
        }
        if (product.contains("mariadb") || product.contains("mysql")) {
            return "mariadb";
        }
        throw PidPoolException.invalid(
                "database", "unsupported task database '%s' (H2, PostgreSQL, MariaDB/MySQL)", product);
    }
}
