package io.pidpool.server.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLTransientConnectionException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The main pool behind a gate: while {@link DatabaseHealth} knows the database to be down, a
 * connection is refused at once with {@link SQLTransientConnectionException} (which the adapters
 * translate to {@code UNAVAILABLE}, answered 503 by the HTTP API) instead of after the pool's
 * connection timeout. Everything else is the pool's.
 */
final class GatedDataSource implements DataSource {
    private final DataSource pool;
    private final DatabaseHealth health;
    private final String name;

    GatedDataSource(DataSource pool, DatabaseHealth health, String name) {
        this.pool = pool;
        this.health = health;
        this.name = name;
    }

    private void requireUp() throws SQLTransientConnectionException {
        DatabaseHealth.Status s = health.status();
        if (s.state() == DatabaseHealth.State.DOWN) {
            throw new SQLTransientConnectionException("database " + name + " is down for " + health.millisInState()
                    + " ms (" + s.detail() + "): not waiting for a connection");
        }
    }

    @Override
    public Connection getConnection() throws SQLException {
        requireUp();
        return pool.getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        requireUp();
        return pool.getConnection(username, password);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return pool.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        pool.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        pool.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return pool.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return pool.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || pool.isWrapperFor(iface);
    }
}
