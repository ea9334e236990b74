package io.pidpool.client.internal;

import io.pidpool.core.sim.SimScheduler;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * How a simulated client runs its listener callbacks: a small seam so that the production policy
 * can be swapped in. A callback takes virtual time: {@link Task#start} runs when a callback thread
 * picks it up and calls {@code finished} when the callback returned.
 */
public interface SimDispatch {
    /** One queued callback. */
    interface Task {
        /** The callback starts now on a callback thread; {@code finished} runs when it has returned. */
        void start(Runnable finished);
    }

    /** Queues a callback; {@code revocation} marks {@code onRevoked}. */
    void execute(String pid, boolean revocation, Task task);

    /**
     * Today's {@code DefaultPidClient.dispatch}: every callback, assignment or revocation, goes to
     * ONE executor of {@code threads} threads (default 4), first in first out.
     */
    final class SharedPool implements SimDispatch {
        private final SimScheduler sched;
        private final SimScheduler.Proc proc;
        private final int threads;
        private final Deque<Task> queue = new ArrayDeque<>();
        private int busy;

        public SharedPool(SimScheduler sched, SimScheduler.Proc proc, int threads) {
            this.sched = sched;
            this.proc = proc;
            this.threads = threads;
        }

        @Override
        public void execute(String pid, boolean revocation, Task task) {
            queue.addLast(task);
            pump();
        }

        private void pump() {
            while (busy < threads && !queue.isEmpty()) {
                Task next = queue.pollFirst();
                busy++;
                next.start(() -> {
                    busy--;
                    sched.after(0, proc, "callback thread free", this::pump);
                });
            }
        }

        public int queued() {
            return queue.size();
        }
    }
}
