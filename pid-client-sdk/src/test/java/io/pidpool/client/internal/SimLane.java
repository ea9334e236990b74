package io.pidpool.client.internal;

import io.pidpool.core.sim.SimScheduler;
import io.pidpool.core.sim.SimScheduler.Proc;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.Executor;
import java.util.function.BiConsumer;

/**
 * One of {@link ListenerDispatch}'s lanes on virtual time: {@code threads} callback threads, first
 * in first out, each callback taking the virtual time given with it ({@link #next}).
 *
 * <p>A {@link ListenerDispatch.Call} ({@code onAssigned}/{@code onUpdated}) runs the real call in two
 * steps: when a thread picks it up it {@linkplain ListenerDispatch.Call#begin begins} (the deadline
 * counts from here) and runs its body, which logs in on the simulated platform; when its time is up
 * it {@linkplain ListenerDispatch.Call#settle returns}, unless the deadline fired first (four in
 * five callbacks that outlive the deadline honour its interrupt and return soon after it; the others
 * keep their thread for their whole time, as a login that ignores interrupts would). Any other
 * task (a revocation) spends its time first and runs when it returns: the logout is done then.
 *
 * <p>Concurrency: single-threaded on the {@link SimScheduler}.
 */
final class SimLane implements Executor {
    private record Queued(Runnable task, long nanos) {}

    private final SimScheduler sched;
    private final Proc proc;
    private final String name;
    private final int threads;
    private final BiConsumer<String, Outcome> returned;
    private final long deadlineNanos;
    private final Deque<Queued> queue = new ArrayDeque<>();
    private long nextNanos;
    private int busy;
    private java.util.function.LongUnaryOperator atStart = n -> n;

    /** @param returned sees a call's own outcome when its time is up, unless it was abandoned */
    SimLane(
            SimScheduler sched,
            Proc proc,
            String name,
            int threads,
            long deadlineNanos,
            BiConsumer<String, Outcome> returned) {
        this.deadlineNanos = deadlineNanos;
        this.sched = sched;
        this.proc = proc;
        this.name = name;
        this.threads = threads;
        this.returned = returned;
    }

    /** A call's time as it starts, from the time given with it ({@link #next}). */
    SimLane atStart(java.util.function.LongUnaryOperator atStart) {
        this.atStart = atStart;
        return this;
    }

    /** The virtual time the next task handed to {@link #execute} takes. */
    SimLane next(long nanos) {
        this.nextNanos = nanos;
        return this;
    }

    @Override
    public void execute(Runnable task) {
        queue.addLast(new Queued(task, nextNanos));
        pump();
    }

    private void pump() {
        while (busy < threads && !queue.isEmpty()) {
            Queued next = queue.pollFirst();
            busy++;
            if (next.task() instanceof ListenerDispatch.Call call) {
                Runnable cancel = call.begin(null);
                Outcome outcome = call.body();
                long nanos = atStart.applyAsLong(next.nanos());
                if (nanos > deadlineNanos && sched.chance(0.8)) {
                    // most callbacks honour the interrupt sent at the deadline; the rest keep their thread
                    nanos = deadlineNanos + sched.between(0, 50_000_000L);
                }
                sched.trace(name, "callback " + call.pid() + " starts (" + nanos / 1_000_000 + " ms)");
                sched.after(nanos, proc, name + " callback " + call.pid() + " returns", () -> {
                    cancel.run();
                    if (!call.reported()) { // an abandoned call was logged out by its onRevoked already
                        returned.accept(call.pid(), outcome);
                    }
                    call.settle(outcome);
                    free();
                });
            } else {
                sched.trace(name, "revocation starts (" + next.nanos() / 1_000_000 + " ms)");
                sched.after(next.nanos(), proc, name + " revocation returns", () -> {
                    next.task().run();
                    free();
                });
            }
        }
    }

    private void free() {
        busy--;
        sched.after(0, proc, name + " thread free", this::pump);
    }

    int queued() {
        return queue.size();
    }
}
