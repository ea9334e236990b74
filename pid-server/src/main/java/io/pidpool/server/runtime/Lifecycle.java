package io.pidpool.server.runtime;

import io.pidpool.core.error.PidPoolException;
import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Things started one after another, closed in reverse order. {@link #close()} may be called from
 * another thread (a shutdown hook) while start-up is still adding things: whatever is added after
 * that is closed at once and start-up is told to stop.
 *
 * <p>Concurrency: one lock guards the stack and the closed flag; {@code close()} holds it while
 * closing, so an {@link #add} racing with it waits and then sees the flag.
 */
final class Lifecycle implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Lifecycle.class);

    private record Entry(String name, AutoCloseable resource) {}

    private final String owner;
    private final Deque<Entry> started = new ArrayDeque<>();
    private boolean closed;

    Lifecycle(String owner) {
        this.owner = owner;
    }

    /**
     * Registers a started resource and returns it. If this lifecycle is already closed, closes the
     * resource and throws {@code UNAVAILABLE} so that start-up stops.
     */
    synchronized <T extends AutoCloseable> T add(String name, T resource) {
        if (closed) {
            closeQuietly(new Entry(name, resource));
            throw PidPoolException.unavailable(owner + " is shutting down; start-up stopped before " + name, null);
        }
        started.push(new Entry(name, resource));
        return resource;
    }

    /** Throws if {@link #close()} was called (checked between slow start-up steps). */
    synchronized void requireOpen(String next) {
        if (closed) {
            throw PidPoolException.unavailable(owner + " is shutting down; start-up stopped before " + next, null);
        }
    }

    synchronized boolean isClosed() {
        return closed;
    }

    /** Closes everything in reverse start order; a failure is logged and the rest still closed. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        while (!started.isEmpty()) {
            closeQuietly(started.pop());
        }
    }

    private void closeQuietly(Entry entry) {
        try {
            log.debug("{}: closing {}", owner, entry.name());
            entry.resource().close();
        } catch (Exception e) {
            log.warn("{}: closing {} failed", owner, entry.name(), e);
        }
    }
}
