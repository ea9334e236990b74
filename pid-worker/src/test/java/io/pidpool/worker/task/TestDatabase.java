package io.pidpool.worker.task;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pidpool.worker.runtime.TcpProxy;
import java.io.IOException;
import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.h2.tools.Server;
import org.junit.jupiter.api.Assumptions;

/**
 * A private database for one test: H2 in memory (always), or a fresh schema on the PostgreSQL /
 * a fresh database on the MariaDB named by {@code PIDPOOL_TEST_POSTGRES_URL} /
 * {@code PIDPOOL_TEST_MARIADB_URL} (the test is skipped when the variable is unset). Several test
 * JVMs share those servers, so every name is random and {@link #close()} drops it.
 *
 * <p>With {@code proxied}, connections go through a {@link TcpProxy} (H2 then runs as a TCP server)
 * so a test can cut the database off and bring it back.
 */
public final class TestDatabase implements AutoCloseable {
    public enum Kind {
        H2,
        POSTGRES,
        MARIADB
    }

    private final Kind kind;
    private final String name;
    private final String adminUrl;
    private final HikariDataSource dataSource;
    private final HikariDataSource direct;
    private final TcpProxy proxy;
    private final Server h2Server;

    private TestDatabase(
            Kind kind,
            String name,
            String adminUrl,
            String url,
            String directUrl,
            TcpProxy proxy,
            Server h2Server,
            int poolSize) {
        this.kind = kind;
        this.name = name;
        this.adminUrl = adminUrl;
        this.proxy = proxy;
        this.h2Server = h2Server;
        this.dataSource = pool(url, poolSize, name);
        this.direct = proxy == null ? dataSource : pool(directUrl, 2, name + "-direct");
    }

    private static HikariDataSource pool(String url, int size, String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(0);
        c.setConnectionTimeout(1000);
        c.setValidationTimeout(500);
        c.setPoolName("test-" + name);
        return new HikariDataSource(c);
    }

    public static TestDatabase open(Kind kind) {
        return open(kind, false, 8);
    }

    public static TestDatabase open(Kind kind, boolean proxied, int poolSize) {
        String name = "pw_" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
        try {
            switch (kind) {
                case H2 -> {
                    if (!proxied) {
                        String url = "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1";
                        return new TestDatabase(kind, name, url, url, url, null, null, poolSize);
                    }
                    System.setProperty("h2.bindAddress", "127.0.0.1");
                    Server server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists")
                            .start();
                    TcpProxy proxy = new TcpProxy("127.0.0.1", server.getPort()).start();
                    String db = "mem:" + name + ";DB_CLOSE_DELAY=-1";
                    String admin = "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/" + db;
                    String url = "jdbc:h2:tcp://127.0.0.1:" + proxy.port() + "/" + db;
                    return new TestDatabase(kind, name, admin, url, admin, proxy, server, poolSize);
                }
                case POSTGRES -> {
                    String base = env("PIDPOOL_TEST_POSTGRES_URL");
                    exec(base, "CREATE SCHEMA " + name);
                    String url = withParam(base, "currentSchema=" + name);
                    TcpProxy proxy = proxied ? proxyFor(base) : null;
                    return new TestDatabase(
                            kind, name, base, proxy == null ? url : viaProxy(url, proxy), url, proxy, null, poolSize);
                }
                case MARIADB -> {
                    String base = env("PIDPOOL_TEST_MARIADB_URL");
                    exec(base, "CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
                    String url = base.replaceFirst("(jdbc:mariadb://[^/]+/)[^?]*", "$1" + name);
                    TcpProxy proxy = proxied ? proxyFor(base) : null;
                    return new TestDatabase(
                            kind, name, base, proxy == null ? url : viaProxy(url, proxy), url, proxy, null, poolSize);
                }
                default -> throw new IllegalArgumentException(kind.toString());
            }
        } catch (SQLException | IOException e) {
            throw new IllegalStateException("cannot create test database " + name + " on " + kind, e);
        }
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** Connections that bypass the proxy: for a test's own set-up and checks. */
    public DataSource directDataSource() {
        return direct;
    }

    public Kind kind() {
        return kind;
    }

    public String name() {
        return name;
    }

    /** The proxy in front of the database; null unless opened {@code proxied}. */
    public TcpProxy proxy() {
        return proxy;
    }

    @Override
    public void close() {
        dataSource.close();
        direct.close();
        if (proxy != null) {
            proxy.close();
        }
        try {
            switch (kind) {
                case H2 -> exec(adminUrl, "DROP ALL OBJECTS");
                case POSTGRES -> exec(adminUrl, "DROP SCHEMA IF EXISTS " + name + " CASCADE");
                case MARIADB -> exec(adminUrl, "DROP DATABASE IF EXISTS " + name);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot drop test database " + name, e);
        } finally {
            if (h2Server != null) {
                h2Server.stop();
            }
        }
    }

    private static String env(String var) {
        String v = System.getenv(var);
        Assumptions.assumeTrue(v != null && !v.isBlank(), var + " is not set");
        return v;
    }

    private static void exec(String url, String sql) throws SQLException {
        try (Connection c = DriverManager.getConnection(url);
                Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static String withParam(String url, String param) {
        return url + (url.contains("?") ? "&" : "?") + param;
    }

    private static TcpProxy proxyFor(String jdbcUrl) throws IOException {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        return new TcpProxy(uri.getHost(), uri.getPort()).start();
    }

    private static String viaProxy(String jdbcUrl, TcpProxy proxy) {
        return jdbcUrl.replaceFirst("//[^/]+/", "//127.0.0.1:" + proxy.port() + "/");
    }

    @Override
    public String toString() {
        return kind.name().toLowerCase(Locale.ROOT) + ":" + name;
    }
}
