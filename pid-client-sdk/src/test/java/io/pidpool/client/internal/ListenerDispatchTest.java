package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The two callback lanes: no blocked {@code onAssigned}/{@code onUpdated}, however many, and no
 * user-supplied executor can delay an {@code onRevoked}.
 */
class ListenerDispatchTest {
    /** Runs nothing until told: a lane on virtual time. */
    static final class ManualExecutor implements Executor {
        final Queue<Runnable> queued = new ArrayDeque<>();

        @Override
        public void execute(Runnable task) {
            queued.add(task);
        }

        void runAll() {
            for (Runnable task; (task = queued.poll()) != null; ) {
                task.run();
            }
        }
    }

    /** Deadlines that never fire: these tests are about the lanes. */
    static final ListenerDispatch.Timer NO_TIMER = new ListenerDispatch.Timer() {
        @Override
        public Runnable schedule(Runnable task, long delayNanos) {
            return () -> {};
        }

        @Override
        public long now() {
            return System.nanoTime();
        }
    };

    static final long D = TimeUnit.SECONDS.toNanos(5);

    final Map<String, Outcome> results = new ConcurrentHashMap<>();
    final CountDownLatch p1Done = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    ListenerDispatch dispatch;

    @AfterEach
    void releaseBlockedCalls() throws InterruptedException {
        release.countDown();
        if (dispatch != null) {
            dispatch.shutdown();
            assertThat(dispatch.awaitTermination(5_000)).isTrue();
        }
    }

    void record(String pid, Outcome outcome) {
        results.put(pid, outcome);
        if (pid.equals("p1")) {
            p1Done.countDown();
        }
    }

    Outcome hang() {
        try {
            release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return new Outcome.Failed("released");
    }

    @Test
    void onVirtualTimeARevocationIsQueuedOnItsOwnLaneNeverBehindCalls() {
        ManualExecutor calls = new ManualExecutor();
        ManualExecutor revocations = new ManualExecutor();
        ListenerDispatch lanes = new ListenerDispatch(calls, revocations, NO_TIMER, D, results::put);

        for (int i = 2; i <= 9; i++) {
            lanes.call("p" + i, this::hang, this::hang); // never run: every call thread is blocked
        }
        lanes.revoke("p1", Outcome.Revoked::new);

        assertThat(revocations.queued).hasSize(1);
        revocations.runAll();
        assertThat(results).containsOnlyKeys("p1");
        assertThat(results.get("p1")).isInstanceOf(Outcome.Revoked.class);
        assertThat(calls.queued).hasSize(8);
    }

    @Test
    void withEveryCallThreadBlockedARevocationStillRunsAtOnce() throws InterruptedException {
        dispatch = ListenerDispatch.forClient(null, "test", NO_TIMER, D, this::record);
        CountDownLatch allBlocked = new CountDownLatch(ListenerDispatch.DEFAULT_CALL_THREADS);
        for (int i = 0; i < ListenerDispatch.DEFAULT_CALL_THREADS + 2; i++) {
            dispatch.call(
                    "slow" + i,
                    () -> {
                        allBlocked.countDown();
                        return hang();
                    },
                    this::hang);
        }
        assertThat(allBlocked.await(10, TimeUnit.SECONDS)).isTrue();

        CountDownLatch revoked = new CountDownLatch(1);
        dispatch.revoke("p1", () -> {
            revoked.countDown();
            return new Outcome.Revoked();
        });

        assertThat(revoked.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p1Done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(results).containsOnlyKeys("p1"); // no call finished meanwhile
    }

    @Test
    void aUserExecutorThatRunsInTheCallersThreadDelaysNeitherTheCallerNorARevocation() throws InterruptedException {
        dispatch = ListenerDispatch.forClient(Runnable::run, "test", NO_TIMER, D, this::record);
        CountDownLatch blocked = new CountDownLatch(1);

        dispatch.call(
                "slow",
                () -> {
                    blocked.countDown();
                    return hang();
                },
                this::hang); // returns at once: the hand-off thread runs it, not the caller (the state thread)
        assertThat(blocked.await(10, TimeUnit.SECONDS)).isTrue();
        CountDownLatch revoked = new CountDownLatch(1);
        dispatch.revoke("p1", () -> {
            revoked.countDown();
            return new Outcome.Revoked();
        });

        assertThat(revoked.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(p1Done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(results).containsOnlyKeys("p1"); // no call finished meanwhile
    }

    @Test
    void aCallTheUserExecutorRefusesFailsWithoutRunning() throws InterruptedException {
        CountDownLatch answered = new CountDownLatch(1);
        dispatch = ListenerDispatch.forClient(
                task -> {
                    throw new RejectedExecutionException("full");
                },
                "test",
                NO_TIMER,
                D,
                (pid, outcome) -> {
                    results.put(pid, outcome);
                    answered.countDown();
                });

        dispatch.call("p1", () -> new Outcome.Failed("must not run"), this::hang);

        assertThat(answered.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(results.get("p1")).isEqualTo(new Outcome.Failed("the callback executor rejected the call"));
    }
}
