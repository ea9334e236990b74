package io.pidpool.server.jdbc;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.transaction.TransactionIsolationLevel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How every adapter reaches the database: one transaction per outermost call, joined by nested
 * calls on the same thread, and errors translated by {@link SqlErrors} on the way out.
 *
 * <p>Concurrency: the running transaction is bound to its thread ({@link #current}), so a
 * {@link io.pidpool.core.port.Transactor} unit of work and the repository calls inside it share one
 * connection. A nested write runs under a savepoint and rolls back to it when it fails: the failed
 * call leaves nothing behind, and the enclosing transaction stays usable (PostgreSQL would otherwise
 * refuse every further statement of an aborted transaction).
 *
 * <p>Deadlocks: InnoDB resolves a deadlock by rolling back a whole transaction (e.g. when first
 * events of one new client race to create its ledger row). An outermost repository call that lost
 * one is simply run again, at most {@link #MAX_ATTEMPTS} times in all: its work is database work
 * only. A unit of work ({@link #writeOnce}) is never re-run, since it may have done other things;
 * and once a call nested in it lost a deadlock or its connection, the unit is doomed: every further
 * call in it fails, and it ends with {@code UNAVAILABLE} and a rollback even if its work catches
 * the error, so it can never commit half of itself. Thread-safe.
 */
final class JdbiSession {
    static final int MAX_ATTEMPTS = 3;

    private static final Logger log = LoggerFactory.getLogger(JdbiSession.class);

    private final Jdbi jdbi;
    private final SqlErrors errors;
    /** JDBC level of {@link #snapshot} reads ({@link Dialect#snapshotIsolation}). */
    private final int snapshotIsolation;

    private final ThreadLocal<Tx> current = new ThreadLocal<>();
    private final AtomicLong savepoints = new AtomicLong();

    /** The transaction running on a thread. */
    private static final class Tx {
        final Handle handle;
        /** Set when the database rolled this transaction back under a nested call. */
        PidPoolException doomed;

        Tx(Handle handle) {
            this.handle = handle;
        }
    }

    JdbiSession(Jdbi jdbi, SqlErrors errors, int snapshotIsolation) {
        this.jdbi = jdbi;
        this.errors = errors;
        this.snapshotIsolation = snapshotIsolation;
    }

    /**
     * Runs a repository's {@code work} atomically: in a new transaction (re-run if it loses a
     * deadlock), or under a savepoint of the running one.
     *
     * @param duplicateField the field a violated primary key is about, for databases that do not
     *     name it (MariaDB); may be null
     */
    <T> T write(String duplicateField, HandleCallback<T, RuntimeException> work) {
        return run(duplicateField, work, MAX_ATTEMPTS);
    }

    /** Runs a unit of work once: in a new transaction, or under a savepoint of the running one. */
    <T> T writeOnce(HandleCallback<T, RuntimeException> work) {
        return run(null, work, 1);
    }

    /** Runs single-statement reads: joins the running transaction, else auto-commit. */
    <T> T read(HandleCallback<T, RuntimeException> work) {
        Tx joined = current.get();
        try {
            if (joined == null) {
                return jdbi.withHandle(work);
            }
            requireAlive(joined);
            return work.withHandle(joined.handle);
        } catch (RuntimeException e) {
            throw errors.translateOrPass(e, null);
        }
    }

    /**
     * Runs multi-statement reads on one consistent snapshot of the whole database (REPEATABLE READ on
     * PostgreSQL and MariaDB, SNAPSHOT on H2: {@link Dialect#snapshotIsolation}) unless a transaction
     * is running, which they join.
     */
    <T> T snapshot(HandleCallback<T, RuntimeException> work) {
        if (current.get() != null) {
            return read(work);
        }
        try (Handle handle = jdbi.open()) {
            TransactionIsolationLevel before = handle.getTransactionIsolationLevel();
            handle.setTransactionIsolationLevel(snapshotIsolation);
            try {
                return handle.inTransaction(work);
            } finally {
                handle.setTransactionIsolationLevel(before);
            }
        } catch (RuntimeException e) {
            throw errors.translateOrPass(e, null);
        }
    }

    /**
     * Runs one statement of a running transaction under a savepoint.
     *
     * @return false if it failed with a database error, which was rolled back (the transaction goes
     *     on); true if it succeeded
     */
    boolean attempt(Handle handle, Consumer<Handle> statement) {
        String name = "pidpool_try_" + savepoints.incrementAndGet();
        handle.savepoint(name);
        try {
            statement.accept(handle);
        } catch (JdbiException e) {
            handle.rollbackToSavepoint(name); // the savepoint itself ends with the transaction
            return false;
        }
        handle.releaseSavepoint(name);
        return true;
    }

    private <T> T run(String duplicateField, HandleCallback<T, RuntimeException> work, int attempts) {
        Tx joined = current.get();
        if (joined != null) {
            return underSavepoint(joined, duplicateField, work);
        }
        for (int attempt = 1; ; attempt++) {
            try {
                return inNewTransaction(work);
            } catch (RuntimeException e) {
                if (attempt < attempts
                        && !(e instanceof PidPoolException)
                        && errors.kindOf(e) == SqlErrors.Kind.DEADLOCK) {
                    log.debug("transaction lost a deadlock, running it again (attempt {})", attempt + 1);
                    continue;
                }
                throw errors.translateOrPass(e, duplicateField);
            }
        }
    }

    private <T> T inNewTransaction(HandleCallback<T, RuntimeException> work) {
        try (Handle handle = jdbi.open()) {
            Tx tx = new Tx(handle);
            current.set(tx);
            try {
                return handle.inTransaction(h -> {
                    T result = work.withHandle(h);
                    if (tx.doomed != null) {
                        throw tx.doomed; // rolls back what the database may not have
                    }
                    return result;
                });
            } finally {
                current.remove();
            }
        }
    }

    private <T> T underSavepoint(Tx tx, String duplicateField, HandleCallback<T, RuntimeException> work) {
        requireAlive(tx);
        Handle handle = tx.handle;
        String name = "pidpool_sp_" + savepoints.incrementAndGet();
        try {
            handle.savepoint(name);
        } catch (RuntimeException e) {
            throw doomIfLost(tx, e, null);
        }
        T result;
        try {
            result = work.withHandle(handle);
        } catch (RuntimeException | Error e) {
            try {
                handle.rollbackToSavepoint(name);
            } catch (RuntimeException rollback) {
                e.addSuppressed(rollback);
            }
            if (e instanceof RuntimeException re) {
                throw doomIfLost(tx, re, duplicateField);
            }
            throw e;
        }
        try {
            handle.releaseSavepoint(name);
        } catch (RuntimeException e) {
            throw doomIfLost(tx, e, null);
        }
        return result;
    }

    private RuntimeException doomIfLost(Tx tx, RuntimeException failure, String duplicateField) {
        if (!(failure instanceof PidPoolException)) {
            SqlErrors.Kind kind = errors.kindOf(failure);
            if (kind == SqlErrors.Kind.DEADLOCK || kind == SqlErrors.Kind.CONNECTION) {
                tx.doomed = new PidPoolException(
                        ErrorCode.UNAVAILABLE,
                        null,
                        "the database rolled this transaction back ("
                                + kind.name().toLowerCase(java.util.Locale.ROOT)
                                + "); nothing of it was committed, run it again");
            }
        }
        return errors.translateOrPass(failure, duplicateField);
    }

    private static void requireAlive(Tx tx) {
        if (tx.doomed != null) {
            throw tx.doomed;
        }
    }
}
