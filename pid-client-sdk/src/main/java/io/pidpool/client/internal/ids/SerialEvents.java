package io.pidpool.client.internal.ids;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one daemon thread on which a registry handles its connection and node events, in the order
 * they arrive and outside every lock (so loss listeners may call back into the registry). An event
 * that throws is logged and the thread goes on; events posted after {@link #shutdown()} are dropped.
 */
final class SerialEvents {
    /** Logs as the registry it belongs to: operators set log levels for {@code CuratorWorkerIdRegistry}. */
    private static final Logger log = LoggerFactory.getLogger(CuratorWorkerIdRegistry.class);

    private final ExecutorService thread;

    SerialEvents(String threadName) {
        this.thread = Executors.newSingleThreadExecutor(runnable -> {
            Thread t = new Thread(runnable, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /** Where Curator delivers connection events to the registry. */
    Executor executor() {
        return thread;
    }

    void post(Runnable task) {
        try {
            thread.execute(guarded(task));
        } catch (RejectedExecutionException closing) {
            log.debug("Registry closed; dropping an event");
        }
    }

    /** {@code task}, with a failure logged instead of thrown. */
    static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.warn("Worker-id registry event failed", e);
            }
        };
    }

    void shutdown() {
        thread.shutdown();
    }
}
