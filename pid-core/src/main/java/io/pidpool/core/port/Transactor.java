package io.pidpool.core.port;

import java.util.function.Supplier;

/**
 * A unit of work over the repositories of one store: every repository call made by {@code work} on
 * the calling thread commits together or not at all (e.g. an accepted batch and its audit row).
 *
 * <p>Every repository method is atomic on its own, also inside a unit of work: a call that throws
 * has changed nothing, and the enclosing unit of work may catch the exception and go on. An
 * exception that escapes {@code work} rolls the whole unit back and is rethrown unchanged.
 *
 * <p>Calls nest: an inner {@code inTransaction} joins the outer one (as a savepoint, so an inner
 * failure that the outer work catches undoes only the inner work). Work must not hand repository
 * calls to other threads and expect them to join: a unit of work belongs to its thread.
 *
 * <p>Isolation is READ COMMITTED on every database. Work may block other writers of the same rows
 * (and, in the in-memory fake, every other caller) until it ends, so keep it short and never wait
 * for another thread inside it.
 */
public interface Transactor {
    /** Runs {@code work} in one transaction and returns its result. */
    <T> T inTransaction(Supplier<T> work);

    /** Runs {@code work} in one transaction. */
    default void useTransaction(Runnable work) {
        inTransaction(() -> {
            work.run();
            return null;
        });
    }
}
