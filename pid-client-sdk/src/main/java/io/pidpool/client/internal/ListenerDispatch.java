package io.pidpool.client.internal;

import io.pidpool.core.error.Preconditions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where listener callbacks run: {@code onAssigned}/{@code onUpdated} on the <em>call lane</em>, {@code
 * onRevoked} on the <em>revocation lane</em>, two executors that share no thread. A login that hangs
 * (every call thread blocked in {@code onAssigned}) therefore never delays a logout: the hold of a PID
 * ends when its revocation is decided plus the time {@code onRevoked} itself needs.
 *
 * <p><b>The bound.</b> A revocation waits only for revocations handed over before it: with R revocation
 * threads and L the longest {@code onRevoked}, the k-th revocation queued at once starts within
 * ⌈k/R⌉·L after the state thread decided it, whatever the call lane does. The client decides a
 * revocation by 2T/3 − T/10 + T/20 after its last ZooKeeper reply (lease lapse, see {@link Timing}) or
 * on SUSPENDED, so with every call thread blocked the hold still ends by the same q + 0.617T + L as on
 * an idle client.
 *
 * <p>A user-supplied callback executor serves the call lane only, and is handed the calls from a
 * thread of the client's own ({@link #handOff}), never from the state thread: an executor that runs
 * tasks in the caller's thread ({@code Runnable::run}) or blocks in {@code execute} holds up later
 * calls, never a revocation or the state thread. The revocation lane always runs on the client's own
 * threads.
 *
 * <p><b>The callback deadline D.</b> A call ({@code onAssigned}/{@code onUpdated}) that has not
 * returned D after it <em>started</em> is abandoned: its thread is interrupted, an error naming the
 * PID and D is logged, and the outcome the caller supplied for an overrun goes to {@link Results}
 * (the client then logs the PID out with {@code onRevoked} and reports the failure). Whatever the call
 * returns later is ignored. D counts from the start, not the hand-over: a call that waited in the lane
 * may still start only while the client's lease is valid, which the caller checks in the call itself.
 *
 * <p>Outcomes go to {@link Results}, exactly once per handed-over callback, from whichever thread ran
 * it or the timer's thread (the client posts them to its state thread).
 *
 * <p>Concurrency: thread-safe and stateless beyond its executors and timer; a deterministic
 * simulation may construct it with executors and a timer that run tasks on virtual time ({@link
 * #ListenerDispatch(Executor, Executor, Timer, long, Results)}). Each call's settlement (returned or
 * overrun) is one compare-and-set; the interrupt is sent under the call's monitor, so it never
 * reaches the lane's thread after the call has left it.
 */
final class ListenerDispatch {
    private static final Logger log = LoggerFactory.getLogger(ListenerDispatch.class);

    /** Threads of the client's own call lane when the user gives no executor. */
    static final int DEFAULT_CALL_THREADS = 4;
    /** Threads of the revocation lane: always the client's own. */
    static final int REVOCATION_THREADS = 4;

    /** Receives the outcome of each callback. Called from the thread that ran (or refused) it. */
    interface Results {
        void done(String pid, Outcome outcome);
    }

    /** Runs a task once after a delay, on the timer's own clock. */
    interface Timer {
        /** Runs {@code task} once after {@code delayNanos}; the returned action cancels it (no-op once it ran). */
        Runnable schedule(Runnable task, long delayNanos);

        /** The timer's clock, in nanoseconds (virtual in a simulation). */
        long now();
    }

    private final Executor calls;
    private final Executor revocations;
    private final Timer timer;
    private final long deadlineNanos;
    private final Results results;
    /** Executors this object created and shuts down in {@link #shutdown()}. */
    private final ExecutorService[] owned;
    /**
     * The calls that started, oldest first, each until the deadline timer passes it: every call has
     * the same D and its deadline is taken under this queue's lock, so the queue is in deadline order
     * and one timer, set for the head, serves them all (a hand-out of 50 PIDs arms the timer once,
     * not 50 times). A call that returned is disarmed and dropped when the timer reaches it.
     */
    private final ArrayDeque<Call> started = new ArrayDeque<>();
    /** Whether the deadline timer is set; guarded by {@link #started}. */
    private boolean timerSet;

    /**
     * @param calls runs {@code onAssigned} and {@code onUpdated}
     * @param revocations runs {@code onRevoked}; must share no thread with {@code calls}
     * @param timer fires the callback deadlines
     * @param deadlineNanos D, the longest a call may run; {@code > 0}
     */
    ListenerDispatch(Executor calls, Executor revocations, Timer timer, long deadlineNanos, Results results) {
        this(calls, revocations, timer, deadlineNanos, results, new ExecutorService[0]);
    }

    private ListenerDispatch(
            Executor calls,
            Executor revocations,
            Timer timer,
            long deadlineNanos,
            Results results,
            ExecutorService[] owned) {
        Preconditions.requireArgument(
                deadlineNanos > 0,
                "callbackDeadline",
                "the callback deadline must be positive, was %d ns",
                deadlineNanos);
        this.calls = calls;
        this.revocations = revocations;
        this.timer = timer;
        this.deadlineNanos = deadlineNanos;
        this.results = results;
        this.owned = owned;
    }

    /**
     * The client's lanes: {@value #DEFAULT_CALL_THREADS} threads of its own for calls, or {@code
     * userExecutor} fed by one hand-off thread; {@value #REVOCATION_THREADS} threads of its own for
     * revocations. Daemon threads named {@code <name>-callback-*}, {@code <name>-revoke-*}.
     *
     * @param userExecutor {@code null}: the client owns the call lane
     */
    static ListenerDispatch forClient(
            Executor userExecutor, String name, Timer timer, long deadlineNanos, Results results) {
        ExecutorService revocations = Executors.newFixedThreadPool(REVOCATION_THREADS, daemon(name + "-revoke-"));
        if (userExecutor == null) {
            ExecutorService calls = Executors.newFixedThreadPool(DEFAULT_CALL_THREADS, daemon(name + "-callback-"));
            return new ListenerDispatch(
                    calls, revocations, timer, deadlineNanos, results, new ExecutorService[] {calls, revocations});
        }
        ExecutorService handOff = Executors.newSingleThreadExecutor(daemon(name + "-handoff-"));
        return new ListenerDispatch(
                handOff(handOff, userExecutor), revocations, timer, deadlineNanos, results, new ExecutorService[] {
                    handOff, revocations
                });
    }

    /**
     * An executor that passes each task to {@code target} from {@code handOff}'s thread; a task {@code
     * target} refuses is refused as if by this executor ({@link Call#refused}).
     */
    static Executor handOff(Executor handOff, Executor target) {
        return task -> handOff.execute(() -> {
            try {
                target.execute(task);
            } catch (RejectedExecutionException e) {
                if (task instanceof Call call) {
                    call.refused();
                } else {
                    throw e;
                }
            }
        });
    }

    /**
     * Runs {@code onAssigned}/{@code onUpdated} ({@code body}) for {@code pid} on the call lane; if it
     * has not returned D after it started, {@code overrun}'s outcome is reported instead (see the class
     * comment).
     */
    void call(String pid, Supplier<Outcome> body, Supplier<Outcome> overrun) {
        Call call = new Call(pid, body, overrun);
        try {
            calls.execute(call);
        } catch (RejectedExecutionException e) {
            call.refused();
        }
    }

    /**
     * Runs {@code onRevoked} ({@code body}) for {@code pid} on the revocation lane; if that lane refuses
     * it (the client is shutting down), runs it on the caller's thread: a logout is never skipped.
     */
    void revoke(String pid, Supplier<Outcome> body) {
        Runnable task = () -> results.done(pid, body.get());
        try {
            revocations.execute(task);
        } catch (RejectedExecutionException e) {
            log.warn("The revocation lane refused onRevoked for PID {}; running it on this thread", pid);
            task.run();
        }
    }

    /** Stops the executors this object created, letting running callbacks finish. */
    void shutdown() {
        for (ExecutorService service : owned) {
            service.shutdown();
        }
    }

    /** Waits up to {@code millis} for the executors this object created to finish (tests). */
    boolean awaitTermination(long millis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        for (ExecutorService service : owned) {
            if (!service.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                return false;
            }
        }
        return true;
    }

    /** Starts the deadline of {@code call}: D from now, on the timer that serves every started call. */
    private void arm(Call call) {
        synchronized (started) {
            call.started = timer.now();
            call.deadline = call.started + deadlineNanos;
            started.addLast(call);
            if (!timerSet) {
                timerSet = true;
                timer.schedule(this::deadlinesPassed, deadlineNanos);
            }
        }
    }

    /** The timer's thread: abandons the calls whose deadline passed, and sets the timer for the next. */
    private void deadlinesPassed() {
        List<Call> overrun = new ArrayList<>();
        synchronized (started) {
            long now = timer.now();
            Call head;
            while ((head = started.peekFirst()) != null && (head.disarmed || head.deadline - now <= 0)) {
                started.pollFirst();
                if (!head.disarmed) {
                    overrun.add(head);
                }
            }
            timerSet = head != null;
            if (timerSet) {
                timer.schedule(this::deadlinesPassed, head.deadline - now);
            }
        }
        overrun.forEach(Call::overrun);
    }

    /** One {@code onAssigned}/{@code onUpdated} on the call lane, with its deadline. */
    final class Call implements Runnable {
        private final String pid;
        private final Supplier<Outcome> body;
        private final Supplier<Outcome> overrun;
        /** Set once: by the return, the deadline or a refusal, whichever comes first. */
        private final AtomicBoolean settled = new AtomicBoolean();
        /** The thread running the body; guarded by {@code this}. */
        private Thread runner;

        /** When the call started and when its deadline passes, on the timer's clock; set by {@link #arm}. */
        private long started;

        private long deadline;
        /** The body returned (or the call settled otherwise): the deadline no longer applies. */
        private volatile boolean disarmed;

        Call(String pid, Supplier<Outcome> body, Supplier<Outcome> overrun) {
            this.pid = pid;
            this.body = body;
            this.overrun = overrun;
        }

        @Override
        public void run() {
            Runnable cancel = begin(Thread.currentThread());
            Outcome outcome;
            try {
                outcome = body();
            } finally {
                cancel.run();
                synchronized (this) {
                    runner = null; // no interrupt reaches this thread from here on
                }
            }
            settle(outcome);
        }

        String pid() {
            return pid;
        }

        /**
         * The call starts: D counts from here. {@code thread} is the one the deadline interrupts ({@code
         * null}: none, as in a simulation where the body's time passes outside any thread). Returns the
         * action that cancels the deadline.
         */
        Runnable begin(Thread thread) {
            synchronized (this) {
                runner = thread;
            }
            arm(this);
            return () -> disarmed = true;
        }

        Outcome body() {
            return body.get();
        }

        /** Whether an outcome was reported already (the deadline passed, or the lane refused the call). */
        boolean reported() {
            return settled.get();
        }

        /** The body returned {@code outcome}: reported, unless the deadline was reported already. */
        void settle(Outcome outcome) {
            if (settled.compareAndSet(false, true)) {
                results.done(pid, outcome);
            } else {
                Thread.interrupted(); // ours, sent at the deadline: the lane's thread lives on clean
                log.warn(
                        "PID {}: the abandoned callback returned after {} ms (deadline {} ms); its outcome {} is ignored",
                        pid,
                        TimeUnit.NANOSECONDS.toMillis(timer.now() - started),
                        TimeUnit.NANOSECONDS.toMillis(deadlineNanos),
                        outcome);
            }
        }

        /** The timer's thread: D passed and the body has not returned. */
        private void overrun() {
            if (!settled.compareAndSet(false, true)) {
                return;
            }
            synchronized (this) {
                if (runner != null) {
                    runner.interrupt();
                }
            }
            log.error(
                    "PID {}: the listener callback did not return within the callback deadline of {} ms;"
                            + " its thread was interrupted, the PID is not held and is logged out with onRevoked",
                    pid,
                    TimeUnit.NANOSECONDS.toMillis(deadlineNanos));
            results.done(pid, overrun.get());
        }

        /** The call lane would not take it: the callback failed without running. */
        void refused() {
            if (settled.compareAndSet(false, true)) {
                results.done(pid, new Outcome.Failed("the callback executor rejected the call"));
            }
        }
    }

    static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }
}
