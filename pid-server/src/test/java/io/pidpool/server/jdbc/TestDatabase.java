package io.pidpool.server.jdbc;

import io.pidpool.core.port.Repositories;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A throw-away database: H2 in memory, or a fresh schema (PostgreSQL) / database
 * (MariaDB) with a random name on the servers named by {@link #POSTGRES_ENV} / {@link #MARIADB_ENV},
 * dropped again by {@link #close()}. Several test JVMs share those servers, hence the random names.
 */
final class TestDatabase implements AutoCloseable {
    static final String POSTGRES_ENV = "PIDPOOL_TEST_POSTGRES_URL";
    static final String MARIADB_ENV = "PIDPOOL_TEST_MARIADB_URL";

    /** Child tables first, so rows can be deleted in this order. */
    private static final List<String> TABLES = List.of(
            "op_pid_attribute",
            "op_pid",
            "op_operation",
            "op_batch_key",
            "op_batch",
            "audit_log",
            "usage_refund",
            "usage_deduction",
            "usage_sequence",
            "usage_client",
            "pool_slot",
            "pool_assignment",
            "pool_pid_cooldown",
            "quota_reset",
            "pool_pid_attribute",
            "pool_pid",
            "pool_module_weight",
            "pool_module",
            "pool_cluster");

    private final Dialect dialect;
    private final String name;
    private final String url;
    private final String adminUrl;
    private final Database database;

    private TestDatabase(Dialect dialect, String name, String url, String adminUrl) {
        this.dialect = dialect;
        this.name = name;
        this.url = url;
        this.adminUrl = adminUrl;
        // 8 connections: the refund races run 6 threads at once
        this.database = Database.open(JdbcSettings.of(url, null, null).withPool(8, Duration.ofSeconds(30)));
    }

    static String randomName() {
        byte[] bytes = new byte[6];
        ThreadLocalRandom.current().nextBytes(bytes);
        return "pp_t_" + HexFormat.of().formatHex(bytes);
    }

    static TestDatabase h2() {
        String name = randomName();
        return new TestDatabase(Dialect.H2, name, "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1", null);
    }

    static TestDatabase postgres() {
        String admin = System.getenv(POSTGRES_ENV);
        String name = randomName();
        admin(admin, "CREATE SCHEMA " + name);
        String url = admin + (admin.contains("?") ? "&" : "?") + "currentSchema=" + name;
        return new TestDatabase(Dialect.POSTGRESQL, name, url, admin);
    }

    static TestDatabase mariadb() {
        String admin = System.getenv(MARIADB_ENV);
        String name = randomName();
        admin(admin, "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        return new TestDatabase(Dialect.MARIADB, name, withDatabase(admin, name), admin);
    }

    static boolean isSet(String env) {
        String value = System.getenv(env);
        return value != null && !value.isBlank();
    }

    /** {@code jdbc:mariadb://host:port/db?params} with another database. */
    static String withDatabase(String url, String database) {
        int slash = url.indexOf('/', "jdbc:mariadb://".length());
        int query = url.indexOf('?', slash);
        return url.substring(0, slash + 1) + database + (query < 0 ? "" : url.substring(query));
    }

    Database database() {
        return database;
    }

    Dialect dialect() {
        return dialect;
    }

    String url() {
        return url;
    }

    /** Empties every table and returns new repositories on {@code clock}. */
    Repositories fresh(Clock clock) {
        var statements = new java.util.ArrayList<>(
                TABLES.stream().map(t -> "DELETE FROM " + t).toList());
        statements.add("UPDATE pool_leader_epoch SET epoch = 0");
        execute(statements);
        return database.repositories(clock);
    }

    /** Runs statements on a pooled connection, outside the adapters. */
    void execute(List<String> statements) {
        try (Connection c = database.dataSource().getConnection();
                Statement s = c.createStatement()) {
            for (String sql : statements) {
                s.execute(sql);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("test database " + name + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        database.close();
        switch (dialect) {
            case POSTGRESQL -> admin(adminUrl, "DROP SCHEMA IF EXISTS " + name + " CASCADE");
            case MARIADB -> admin(adminUrl, "DROP DATABASE IF EXISTS " + name);
            case H2 -> admin(url, "SHUTDOWN"); // DB_CLOSE_DELAY=-1 kept it alive after the pool closed
        }
    }

    @Override
    public String toString() {
        return dialect + ":" + name;
    }

    private static void admin(String url, String sql) {
        try (Connection c = DriverManager.getConnection(url);
                Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + " failed: " + e.getMessage(), e);
        }
    }
}
