package io.pidpool.worker.runtime;

import io.pidpool.worker.task.NonRetryableTaskException;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the handlers of one claimed batch, at most {@code concurrency} at once, each with a timeout.
 *
 * <p>Concurrency: {@link #runAll} is called from the worker's loop thread only. Handlers run on a
 * cached pool; a permit of the semaphore is held per running handler and given back exactly once,
 * by whichever comes first of the handler returning and its timeout. A handler that ignores the
 * interrupt keeps its thread but not its permit, so one stuck handler cannot stall the worker.
 */
final class HandlerRunner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HandlerRunner.class);

    /** What became of one task. */
    sealed interface Outcome {
        Task task();
    }

    record Succeeded(Task task) implements Outcome {}

    record Failed(Task task, String error, boolean retryable, boolean timedOut) implements Outcome {}

    record NotStarted(Task task) implements Outcome {}

    private final Map<String, TaskHandler> handlers;
    private final Duration timeout;
    private final Semaphore permits;
    private final ExecutorService threads;
    private final ScheduledThreadPoolExecutor timer;

    HandlerRunner(String memberId, Map<String, TaskHandler> handlers, int concurrency, Duration timeout) {
        this.handlers = Map.copyOf(handlers);
        this.timeout = timeout;
        this.permits = new Semaphore(concurrency);
        this.threads = Executors.newCachedThreadPool(daemon("pidpool-worker-" + memberId + "-handler-"));
        this.timer = new ScheduledThreadPoolExecutor(1, daemon("pidpool-worker-" + memberId + "-timeouts-"));
        this.timer.setRemoveOnCancelPolicy(true);
    }

    /** The task types this runner has handlers for. */
    Set<String> types() {
        return handlers.keySet();
    }

    /**
     * Runs {@code tasks} and waits for every outcome (bounded by the handler timeout). Once {@code
     * mayStart} says no (stopping, or too little of the lease left), tasks not yet started are
     * returned as {@link NotStarted}.
     */
    List<Outcome> runAll(List<Task> tasks, BooleanSupplier mayStart) {
        List<CompletableFuture<Outcome>> results = new ArrayList<>(tasks.size());
        for (Task task : tasks) {
            if (!acquire(mayStart)) {
                results.add(CompletableFuture.completedFuture(new NotStarted(task)));
                continue;
            }
            results.add(start(task));
        }
        List<Outcome> outcomes = new ArrayList<>(results.size());
        for (CompletableFuture<Outcome> f : results) {
            outcomes.add(f.join());
        }
        return outcomes;
    }

    private boolean acquire(BooleanSupplier mayStart) {
        while (mayStart.getAsBoolean()) {
            try {
                if (permits.tryAcquire(50, TimeUnit.MILLISECONDS)) {
                    if (mayStart.getAsBoolean()) {
                        return true;
                    }
                    permits.release();
                    return false;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return false;
    }

    private CompletableFuture<Outcome> start(Task task) {
        CompletableFuture<Outcome> result = new CompletableFuture<>();
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                permits.release();
            }
        };
        TaskHandler handler = handlers.get(task.type());
        if (handler == null) {
            release.run();
            result.complete(new Failed(task, "no handler registered for task type '" + task.type() + "'", true, false));
            return result;
        }
        Future<?> running = threads.submit(() -> {
            try {
                handler.handle(task);
                result.complete(new Succeeded(task));
            } catch (NonRetryableTaskException e) {
                result.complete(new Failed(task, describe(e), false, false));
            } catch (RuntimeException | Error e) {
                result.complete(new Failed(task, describe(e), true, false));
            } finally {
                release.run();
            }
        });
        ScheduledFuture<?> deadline = timer.schedule(
                () -> {
                    if (result.complete(new Failed(task, "handler timed out after " + timeout, true, true))) {
                        LOG.warn("task {} ({}) ran past {}: interrupting its handler", task.id(), task.type(), timeout);
                        running.cancel(true);
                        release.run();
                    }
                },
                timeout.toNanos(),
                TimeUnit.NANOSECONDS);
        result.whenComplete((o, e) -> deadline.cancel(false));
        return result;
    }

    private static String describe(Throwable e) {
        String msg = e.getMessage();
        return e.getClass().getName() + (msg == null ? "" : ": " + msg);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        threads.shutdownNow();
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
