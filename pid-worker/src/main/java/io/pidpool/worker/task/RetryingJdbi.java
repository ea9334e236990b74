package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import java.sql.SQLException;
import java.util.function.Supplier;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;

/**
 * A {@link Jdbi} whose calls are repeated up to twice when the database rolled them back as a
 * deadlock victim or serialization failure (SQLSTATE 40xxx), and whose other failures become
 * {@code UNAVAILABLE} at once. Only for statements that are safe to repeat: every statement of the
 * task store is conditional.
 */
final class RetryingJdbi {
    private static final int ATTEMPTS = 3;

    private final Jdbi jdbi;

    RetryingJdbi(Jdbi jdbi) {
        this.jdbi = requireNonNull(jdbi, "jdbi");
    }

    <T> T withHandle(HandleCallback<T, RuntimeException> callback) {
        return retryingTransient(() -> jdbi.withHandle(callback));
    }

    <T> T inTransaction(HandleCallback<T, RuntimeException> callback) {
        return retryingTransient(() -> jdbi.inTransaction(callback));
    }

    private static <T> T retryingTransient(Supplier<T> call) {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.get();
            } catch (JdbiException e) {
                if (attempt >= ATTEMPTS || !isTransient(e)) {
                    throw unavailable(e);
                }
            }
        }
    }

    private static boolean isTransient(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql
                    && sql.getSQLState() != null
                    && sql.getSQLState().startsWith("40")) {
                return true;
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return false;
    }

    private static PidPoolException unavailable(JdbiException e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return PidPoolException.unavailable("task store: " + root.getMessage(), e);
    }
}
