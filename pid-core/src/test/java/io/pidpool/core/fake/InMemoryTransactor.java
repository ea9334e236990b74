package io.pidpool.core.fake;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.Transactor;
import java.util.function.Supplier;

/** Units of work over an {@link InMemoryDatabase}: the store's lock and undo stack. Thread-safe. */
final class InMemoryTransactor implements Transactor {
    private final InMemoryDatabase db;

    InMemoryTransactor(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public <T> T inTransaction(Supplier<T> work) {
        Preconditions.requireNonNull(work, "work");
        return db.write(work);
    }
}
