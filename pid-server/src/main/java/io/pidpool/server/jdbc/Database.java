package io.pidpool.server.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.micrometer.core.instrument.MeterRegistry;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.util.Objects;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.output.MigrateResult;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.statement.SqlStatements;
import org.jdbi.v3.core.statement.StatementExceptions;
import org.jdbi.v3.core.statement.TemplateEngine;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PidPool database: a HikariCP pool, the schema migrated by Flyway on open, and the Jdbi
 * adapters of every repository port.
 *
 * <pre>{@code
 * try (Database db = Database.open("jdbc:postgresql://db:5432/pidpool", "pidpool", secret)) {
 *     Repositories repos = db.repositories(Clock.systemUTC());
 *     repos.transactor().useTransaction(() -> { repos.operations().append(batch); repos.audit().append(entry); });
 * }
 * }</pre>
 *
 * <p>Every connection runs at READ COMMITTED (MariaDB's default would be REPEATABLE READ). The schema
 * history lives in its own table, {@code pidpool_schema_history}, so other components may keep their
 * own Flyway history in the same schema. Opening fails with {@code UNAVAILABLE} when the database
 * cannot be reached. Thread-safe; close it once when the process ends.
 */
public final class Database implements AutoCloseable {
    /** Flyway location of the migrations. */
    public static final String MIGRATIONS = "classpath:db/pidpool";
    /** Flyway history table. */
    public static final String HISTORY_TABLE = "pidpool_schema_history";

    private static final Logger log = LoggerFactory.getLogger(Database.class);

    private final HikariDataSource pool;
    /** The pool behind the health gate: what every adapter and component uses. */
    private final DataSource dataSource;

    private final DatabaseHealth health;
    private final Dialect dialect;
    private final JdbiSession session;
    /** The url without credentials, for messages. */
    private final String name;

    private Database(HikariDataSource pool, DatabaseHealth health, Dialect dialect, String name) {
        this.pool = pool;
        this.health = health;
        this.dataSource = new GatedDataSource(pool, health, name);
        this.dialect = dialect;
        this.name = name;
        Jdbi jdbi = Jdbi.create(dataSource);
        // SQL is plain text with :named parameters; no <template> attributes to trip over "<" and ">"
        jdbi.getConfig(SqlStatements.class).setTemplateEngine(TemplateEngine.NOP);
        // exception messages name the statement, never its arguments (sealed secrets are arguments)
        jdbi.getConfig(StatementExceptions.class)
                .setMessageRendering(StatementExceptions.MessageRendering.SHORT_STATEMENT);
        this.session = new JdbiSession(jdbi, new SqlErrors(dialect), dialect.snapshotIsolation());
    }

    /** Opens a pool with default sizes, migrates the schema and returns the database. */
    public static Database open(String url, String user, String password) {
        return open(JdbcSettings.of(url, user, password));
    }

    /** Opens a pool, migrates the schema and returns the database. */
    public static Database open(JdbcSettings config) {
        Objects.requireNonNull(config, "config");
        Dialect dialect = config.dialect();
        SqlErrors errors = new SqlErrors(dialect);
        HikariDataSource dataSource;
        try {
            dataSource = new HikariDataSource(hikari(config, dialect));
        } catch (RuntimeException e) {
            throw unreachable(config, errors, e);
        }
        try {
            migrate(dataSource, dialect, errors);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
        HikariDataSource probePool;
        try {
            probePool = new HikariDataSource(probe(config, dialect));
        } catch (RuntimeException e) {
            dataSource.close();
            throw unreachable(config, errors, e);
        }
        DatabaseHealth health = new DatabaseHealth(
                probePool, config.redactedUrl(), DatabaseHealth.DEFAULT_INTERVAL, DatabaseHealth.DEFAULT_ANSWER_WITHIN);
        return new Database(dataSource, health, dialect, config.redactedUrl());
    }

    /** The repositories over this database; stored timestamps come from {@code clock}. */
    public Repositories repositories(Clock clock) {
        Objects.requireNonNull(clock, "clock");
        return new Repositories(
                new JdbiTransactor(session),
                new JdbiModuleRepository(session, clock),
                new JdbiPidRepository(session, clock),
                new JdbiAssignmentRepository(session, clock),
                new JdbiSlotRepository(session, clock),
                new JdbiOperationLog(session, clock),
                new JdbiAuditLog(session),
                new JdbiUsageLedger(session),
                new JdbiLeaderFence(session));
    }

    /** The alert store over this database (table {@code alert}, docs/alerts.md). */
    public io.pidpool.core.port.AlertStore alerts() {
        return new JdbiAlertStore(session);
    }

    /** Durable RESET_QUOTA generations (docs/quota.md §6a). */
    public io.pidpool.core.port.QuotaResetLog quotaResets() {
        return new JdbiQuotaResetLog(session);
    }

    /** Which modules had PIDs move in or out (for exact module usage, docs/usage-monitoring.md). */
    public JdbiModuleMoves moduleMoves() {
        return new JdbiModuleMoves(session);
    }

    /** Where the leader keeps the PIDs in cooldown with their end times (account health). */
    public CooldownRepository cooldowns() {
        return new JdbiCooldownRepository(session);
    }

    /**
     * Binds this database to {@code cluster} at the first start of a server of it, and checks the
     * binding at every later start (table {@code pool_cluster}, docs/database.md "One cluster per
     * database").
     *
     * @return {@code cluster}
     * @throws PidPoolException {@code ILLEGAL_STATE} on {@code cluster} if a server of another cluster
     *     bound the database; the message says which, in one line
     */
    public String bindCluster(String cluster, java.time.Instant now) {
        Objects.requireNonNull(now, "now");
        return ClusterBinding.bind(session, name, cluster, now);
    }

    public Dialect dialect() {
        return dialect;
    }

    /** The session the adapters share; for tests of the error translation. */
    JdbiSession session() {
        return session;
    }

    /**
     * The pool, for components that keep their own tables in the same database; behind the health
     * gate (a connection is refused at once while the database is known to be down).
     */
    public DataSource dataSource() {
        return dataSource;
    }

    /**
     * HikariCP's own pool meters ({@code hikaricp_connections_*}) in {@code registry}: bound to the
     * pool itself, since {@link #dataSource()} is the health gate in front of it.
     */
    public void bindMetrics(MeterRegistry registry) {
        pool.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
    }

    /** Whether the database answers, from the background probe; never blocks. */
    public DatabaseHealth health() {
        return health;
    }

    /** Whether a connection can be had and answers; never throws. */
    public boolean isHealthy() {
        try {
            return session.read(
                            h -> h.createQuery("SELECT 1").mapTo(Integer.class).one())
                    == 1;
        } catch (RuntimeException e) {
            log.debug("database health check failed", e);
            return false;
        }
    }

    @Override
    public void close() {
        health.close();
        pool.close();
    }

    private static HikariConfig hikari(JdbcSettings config, Dialect dialect) {
        var hikari = new HikariConfig();
        hikari.setPoolName("pidpool-db");
        hikari.setJdbcUrl(config.url());
        hikari.setUsername(config.user());
        hikari.setPassword(config.password());
        hikari.setMaximumPoolSize(config.maxPoolSize());
        hikari.setMinimumIdle(Math.min(2, config.maxPoolSize()));
        hikari.setConnectionTimeout(config.connectionTimeout().toMillis());
        // a borrowed idle connection is checked within this; a stalled database fails it fast
        hikari.setValidationTimeout(Math.min(1_000, config.connectionTimeout().toMillis()));
        hikari.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        hikari.setAutoCommit(true);
        hikari.setInitializationFailTimeout(1); // fail fast at startup when the database is unreachable
        if (dialect.connectionInitSql() != null) {
            hikari.setConnectionInitSql(dialect.connectionInitSql());
        }
        if (dialect == Dialect.POSTGRESQL) {
            // keep "Failing row contains (...)" (row values) out of exception messages
            hikari.addDataSourceProperty("logServerErrorDetail", "false");
        }
        return hikari;
    }

    /**
     * The health probe's own pool: one connection, so that a busy main pool never looks like an
     * outage; it may start empty (the probe then reports DOWN until the database answers).
     */
    private static HikariConfig probe(JdbcSettings config, Dialect dialect) {
        HikariConfig hikari = hikari(config, dialect);
        hikari.setPoolName("pidpool-db-probe");
        hikari.setMaximumPoolSize(1);
        hikari.setMinimumIdle(1);
        hikari.setConnectionTimeout(DatabaseHealth.DEFAULT_ANSWER_WITHIN.toMillis());
        hikari.setValidationTimeout(500);
        hikari.setInitializationFailTimeout(-1);
        return hikari;
    }

    private static void migrate(DataSource dataSource, Dialect dialect, SqlErrors errors) {
        try {
            MigrateResult result = Flyway.configure(Database.class.getClassLoader())
                    .dataSource(dataSource)
                    .locations(MIGRATIONS)
                    .table(HISTORY_TABLE)
                    .placeholders(dialect.placeholders())
                    .validateMigrationNaming(true)
                    .load()
                    .migrate();
            log.info(
                    "database schema at version {} ({} migration(s) applied)",
                    result.targetSchemaVersion,
                    result.migrationsExecuted);
        } catch (FlywayException e) {
            SqlErrors.Kind kind = errors.kindOf(e);
            if (kind == SqlErrors.Kind.CONNECTION || kind == SqlErrors.Kind.TRANSIENT) {
                throw errors.translate(e, null);
            }
            throw new PidPoolException(
                    io.pidpool.core.error.ErrorCode.ILLEGAL_STATE,
                    null,
                    "database schema migration failed: " + e.getMessage(),
                    e);
        }
    }

    private static PidPoolException unreachable(JdbcSettings config, SqlErrors errors, RuntimeException e) {
        PidPoolException translated = errors.translate(e, null);
        return new PidPoolException(
                translated.code(),
                "database.url",
                "cannot open database " + config.redactedUrl() + ": " + translated.getMessage(),
                translated.getCause());
    }
}
