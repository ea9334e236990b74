package io.pidpool.client.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the end of the JVM does to a client that was not closed (docs/sdk.md "End of the JVM").
 *
 * <ul>
 *   <li><b>Shutdown hook</b> (builder {@code closeOnJvmExit}, default on): {@code close()} runs when
 *       the JVM shuts down (the last non-daemon thread ended, {@code System.exit}, SIGTERM/SIGINT), so
 *       the PIDs are logged out ({@code onRevoked}), answered DELETED and the instance node is deleted
 *       at once, instead of the leader waiting for the session to expire plus its grace.
 *   <li><b>Exit watch</b>: every SDK thread is a daemon thread, but Redisson's are not (its timer
 *       thread cannot be configured). The SDK builds its Redisson clients inside a thread group of its
 *       own; a daemon thread looks every {@link #POLL_MILLIS} ms whether the JVM's main thread has
 *       ended ({@code DestroyJavaVM} is waiting) and every other live non-daemon thread is in such a
 *       group. Then nothing of the application can call the client any more and only the SDK keeps
 *       the JVM alive: it closes those clients, their Redisson threads end and the JVM exits (running
 *       the hooks). A JVM without the standard launcher (no {@code DestroyJavaVM}) is left alone.
 * </ul>
 *
 * <p>Concurrency: {@link #install}, {@link #watch} and {@link #close} are called by the client's
 * starting and closing threads; the watch runs on one daemon thread per JVM, started by the first
 * {@link #watch} and ending once no client is watched.
 */
final class JvmExit implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(JvmExit.class);
    static final long POLL_MILLIS = 200;
    private static final String DESTROY_JAVA_VM = "DestroyJavaVM";

    private static final Set<JvmExit> WATCHED = ConcurrentHashMap.newKeySet();
    private static final AtomicReference<Thread> WATCHER = new AtomicReference<>();

    private final String name;
    private final Runnable close;
    private final Thread hook;
    private volatile ThreadGroup owned;

    private JvmExit(String name, Runnable close, Thread hook) {
        this.name = name;
        this.close = close;
        this.hook = hook;
    }

    /** Registers {@code close} as a shutdown hook if {@code hook}; the exit watch starts with {@link #watch}. */
    static JvmExit install(String name, Runnable close, boolean hook) {
        Thread thread = null;
        if (hook) {
            thread = new Thread(close, name + "-shutdown");
            try {
                Runtime.getRuntime().addShutdownHook(thread);
            } catch (IllegalStateException shuttingDown) {
                thread = null; // the JVM is already going down; start() fails or close() follows
            }
        }
        return new JvmExit(name, close, thread);
    }

    /** A thread group whose threads count as the client's own for the exit watch. */
    static ThreadGroup newGroup(String name) {
        return new ThreadGroup(name);
    }

    /**
     * Runs {@code create} on a new thread of {@code group} and returns its result: every thread the
     * created object starts (directly or through its own threads) is then in {@code group}.
     */
    static <T> T createIn(ThreadGroup group, Supplier<T> create) {
        AtomicReference<T> result = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread creator = new Thread(
                group,
                () -> {
                    try {
                        result.set(create.get());
                    } catch (Throwable t) {
                        failure.set(t);
                    }
                },
                group.getName() + "-create");
        creator.setDaemon(true);
        creator.setContextClassLoader(Thread.currentThread().getContextClassLoader());
        creator.start();
        boolean interrupted = false;
        while (true) {
            try {
                creator.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // finish creating, so that nothing is left half-built
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
        return result.get();
    }

    /** From now on the exit watch closes this client when only {@code group}'s threads keep the JVM. */
    void watch(ThreadGroup group) {
        owned = group;
        WATCHED.add(this);
        startWatcher();
    }

    /** The client closed: no hook, no watch. Never throws. */
    @Override
    public void close() {
        WATCHED.remove(this);
        if (hook != null && Thread.currentThread() != hook) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs (or ran) anyway; close() is idempotent
            }
        }
    }

    private static void startWatcher() {
        if (WATCHER.get() != null) {
            return;
        }
        Thread thread = new Thread(JvmExit::watchLoop, "pidclient-exit-watch");
        thread.setDaemon(true);
        if (WATCHER.compareAndSet(null, thread)) {
            thread.start();
        }
    }

    private static void watchLoop() {
        while (true) {
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            if (WATCHED.isEmpty()) {
                // nothing to watch: end, unless a client registered meanwhile and found us running
                WATCHER.set(null);
                if (WATCHED.isEmpty() || !WATCHER.compareAndSet(null, Thread.currentThread())) {
                    return;
                }
                continue;
            }
            Set<ThreadGroup> groups = ConcurrentHashMap.newKeySet();
            WATCHED.forEach(w -> {
                ThreadGroup g = w.owned;
                if (g != null) {
                    groups.add(g);
                }
            });
            if (!onlyOwnedThreadsKeepTheJvm(liveThreads(), groups)) {
                continue;
            }
            for (JvmExit w : WATCHED) {
                if (WATCHED.remove(w)) {
                    log.info(
                            "The JVM's main thread ended without closing {} and only its Redis threads keep the JVM"
                                    + " alive: closing it so that the JVM can exit",
                            w.name);
                    try {
                        w.close.run();
                    } catch (RuntimeException e) {
                        log.warn("Closing {} failed: {}", w.name, e.toString());
                    }
                }
            }
        }
    }

    /**
     * Whether the main thread has ended ({@code DestroyJavaVM} waits for the others) and every other
     * live non-daemon thread belongs to one of {@code owned} (or a group below one).
     */
    static boolean onlyOwnedThreadsKeepTheJvm(Thread[] threads, Set<ThreadGroup> owned) {
        boolean mainEnded = false;
        for (Thread t : threads) {
            if (t == null || !t.isAlive()) {
                continue;
            }
            if (DESTROY_JAVA_VM.equals(t.getName())) {
                mainEnded = true;
                continue;
            }
            if (t.isDaemon()) {
                continue;
            }
            ThreadGroup g = t.getThreadGroup();
            if (g == null) {
                continue; // it just ended
            }
            if (!within(g, owned)) {
                return false;
            }
        }
        return mainEnded;
    }

    private static boolean within(ThreadGroup g, Set<ThreadGroup> owned) {
        for (ThreadGroup x = g; x != null; x = x.getParent()) {
            if (owned.contains(x)) {
                return true;
            }
        }
        return false;
    }

    private static Thread[] liveThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() + 16];
        int n;
        while ((n = root.enumerate(threads, true)) == threads.length) {
            threads = new Thread[threads.length * 2];
        }
        Thread[] live = new Thread[n];
        System.arraycopy(threads, 0, live, 0, n);
        return live;
    }
}
