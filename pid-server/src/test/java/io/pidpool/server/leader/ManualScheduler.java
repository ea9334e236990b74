package io.pidpool.server.leader;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A scheduler that runs {@code execute} at once on the caller and keeps every scheduled task until
 * the test runs it: time does not pass unless the test says so. Single-threaded use only.
 */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    /** A scheduled task; {@code repeating} for fixed-rate/fixed-delay ones. */
    static final class Task implements ScheduledFuture<Object> {
        final Runnable action;
        final long delayMillis;
        final boolean repeating;
        boolean cancelled;
        boolean done;

        Task(Runnable action, long delayMillis, boolean repeating) {
            this.action = action;
            this.delayMillis = delayMillis;
            this.repeating = repeating;
        }

        /** Runs the task once (unless cancelled). */
        void run() {
            if (!cancelled && !done) {
                action.run();
                done = !repeating;
            }
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(delayMillis, TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(delayMillis, o.getDelay(TimeUnit.MILLISECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            cancelled = true;
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public Object get() {
            return null;
        }

        @Override
        public Object get(long timeout, TimeUnit unit) {
            return null;
        }
    }

    final List<Task> tasks = new ArrayList<>();
    private boolean shutdown;

    List<Task> live(boolean repeating) {
        return tasks.stream()
                .filter(t -> t.repeating == repeating && !t.isDone())
                .toList();
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return add(new Task(command, unit.toMillis(delay), false));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return add(new Task(command, unit.toMillis(period), true));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return add(new Task(command, unit.toMillis(delay), true));
    }

    private Task add(Task task) {
        tasks.add(task);
        return task;
    }

    @Override
    public void execute(Runnable command) {
        command.run();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown = true;
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }
}
