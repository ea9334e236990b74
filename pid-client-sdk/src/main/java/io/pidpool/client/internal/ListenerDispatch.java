package io.pidpool.client.internal;

import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
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
 * <p>Outcomes go to {@link Results}, exactly once per handed-over callback, from whichever thread ran
 * it (the client posts them to its state thread).
 *
 * <p>Concurrency: thread-safe and stateless beyond its executors; a deterministic simulation may
 * construct it with executors that run tasks on virtual time ({@link #ListenerDispatch(Executor,
 * Executor, Results)}).
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

    private final Executor calls;
    private final Executor revocations;
    private final Results results;
    /** Executors this object created and shuts down in {@link #shutdown()}. */
    private final ExecutorService[] owned;

    /**
     * @param calls runs {@code onAssigned} and {@code onUpdated}
     * @param revocations runs {@code onRevoked}; must share no thread with {@code calls}
     */
    ListenerDispatch(Executor calls, Executor revocations, Results results) {
        this(calls, revocations, results, new ExecutorService[0]);
    }

    private ListenerDispatch(Executor calls, Executor revocations, Results results, ExecutorService[] owned) {
        this.calls = calls;
        this.revocations = revocations;
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
    static ListenerDispatch forClient(Executor userExecutor, String name, Results results) {
        ExecutorService revocations = Executors.newFixedThreadPool(REVOCATION_THREADS, daemon(name + "-revoke-"));
        if (userExecutor == null) {
            ExecutorService calls = Executors.newFixedThreadPool(DEFAULT_CALL_THREADS, daemon(name + "-callback-"));
            return new ListenerDispatch(calls, revocations, results, new ExecutorService[] {calls, revocations});
        }
        ExecutorService handOff = Executors.newSingleThreadExecutor(daemon(name + "-handoff-"));
        return new ListenerDispatch(
                handOff(handOff, userExecutor), revocations, results, new ExecutorService[] {handOff, revocations});
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

    /** Runs {@code onAssigned}/{@code onUpdated} ({@code body}) for {@code pid} on the call lane. */
    void call(String pid, Supplier<Outcome> body) {
        Call call = new Call(pid, body);
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

    /** One {@code onAssigned}/{@code onUpdated} on the call lane. */
    final class Call implements Runnable {
        private final String pid;
        private final Supplier<Outcome> body;

        Call(String pid, Supplier<Outcome> body) {
            this.pid = pid;
            this.body = body;
        }

        @Override
        public void run() {
            results.done(pid, body.get());
        }

        /** The call lane would not take it: the callback failed without running. */
        void refused() {
            results.done(pid, new Outcome.Failed("the callback executor rejected the call"));
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
