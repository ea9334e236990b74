package io.pidpool.worker.runtime;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * A {@link DataSource} that a test can cut off: while cut, getting a connection and every call on
 * a connection handed out earlier fail with {@link SQLException}. Models a worker that lost its
 * database (or died) without touching the database other workers use.
 */
final class CuttableDataSource {
    private volatile boolean cut;
    private final DataSource dataSource;

    CuttableDataSource(DataSource target) {
        this.dataSource = (DataSource) Proxy.newProxyInstance(
                DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class}, guard(target, true));
    }

    DataSource dataSource() {
        return dataSource;
    }

    void cut() {
        cut = true;
    }

    void restore() {
        cut = false;
    }

    boolean isCut() {
        return cut;
    }

    private InvocationHandler guard(Object target, boolean wrapConnections) {
        return (proxy, method, args) -> {
            if (cut && !method.getName().equals("close")) {
                throw new SQLException("cut off by the test");
            }
            try {
                Object result = method.invoke(target, args);
                if (wrapConnections && result instanceof Connection c) {
                    return Proxy.newProxyInstance(
                            Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, guard(c, false));
                }
                return result;
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
    }
}
