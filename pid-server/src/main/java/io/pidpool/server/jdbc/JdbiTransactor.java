package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.Transactor;
import java.util.function.Supplier;

/** {@link Transactor} as a Jdbi transaction bound to the calling thread. Thread-safe. */
final class JdbiTransactor implements Transactor {
    private final JdbiSession session;

    JdbiTransactor(JdbiSession session) {
        this.session = session;
    }

    @Override
    public <T> T inTransaction(Supplier<T> work) {
        Preconditions.requireNonNull(work, "work");
        return session.writeOnce(handle -> work.get());
    }
}
