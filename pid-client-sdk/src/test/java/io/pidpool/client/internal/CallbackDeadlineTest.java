package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidAccount;
import io.pidpool.client.internal.ListenerDispatchTest.ManualExecutor;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The callback deadline D: a call that has not returned D after it started is abandoned (its thread
 * interrupted), the PID is not held, {@code onRevoked} logs it out and the failure is reported in the
 * node; a late return changes nothing. Manual time and manual lanes only.
 */
class CallbackDeadlineTest {
    static final long D = Duration.ofSeconds(5).toNanos();

    /** A timer on virtual time. */
    static final class ManualTimer implements ListenerDispatch.Timer {
        record Task(long at, Runnable task) {}

        final List<Task> tasks = new ArrayList<>();
        long now;

        @Override
        public Runnable schedule(Runnable task, long delayNanos) {
            Task t = new Task(now + delayNanos, task);
            tasks.add(t);
            return () -> tasks.remove(t);
        }

        @Override
        public long now() {
            return now;
        }

        void advance(long nanos) {
            now += nanos;
            for (Task t : List.copyOf(tasks)) {
                if (t.at() <= now && tasks.remove(t)) {
                    t.task().run();
                }
            }
        }
    }

    final ManualExecutor calls = new ManualExecutor();
    final ManualExecutor revocations = new ManualExecutor();
    final ManualTimer timer = new ManualTimer();
    final List<String> results = new ArrayList<>();
    final ListenerDispatch dispatch =
            new ListenerDispatch(calls, revocations, timer, D, (pid, outcome) -> results.add(pid + "=" + outcome));

    @Test
    void aCallThatOverrunsTheDeadlineIsAbandonedOnceAndItsLateReturnIgnored() {
        List<Runnable> whenOverrun = new ArrayList<>();
        Thread[] callThread = new Thread[1];
        dispatch.call(
                "p1",
                () -> {
                    callThread[0] = Thread.currentThread();
                    // the login "hangs": virtual time passes the deadline while it runs
                    timer.advance(D - 1);
                    assertThat(results).isEmpty();
                    timer.advance(1);
                    assertThat(Thread.currentThread().isInterrupted()).isTrue(); // told to stop
                    return new Outcome.Assigned(account("p1"));
                },
                () -> {
                    whenOverrun.add(() -> {});
                    return new Outcome.Overran(account("p1"), "onAssigned did not return within 5000 ms");
                });
        assertThat(results).isEmpty(); // nothing runs until the lane does
        timer.advance(10 * D);
        assertThat(results).isEmpty(); // the deadline counts from the start, not the hand-over

        calls.runAll();

        assertThat(whenOverrun).hasSize(1);
        assertThat(results)
                .containsExactly(
                        "p1=" + new Outcome.Overran(account("p1"), "onAssigned did not return within 5000 ms"));
        assertThat(Thread.currentThread().isInterrupted()).isFalse(); // the lane's thread lives on clean
        assertThat(timer.tasks).isEmpty();
    }

    @Test
    void aCallThatReturnsInTimeCancelsItsDeadline() {
        dispatch.call("p1", () -> new Outcome.Assigned(account("p1")), () -> {
            throw new AssertionError("not overrun");
        });
        calls.runAll();
        timer.advance(2 * D);
        assertThat(results).containsExactly("p1=" + new Outcome.Assigned(account("p1")));
        assertThat(timer.tasks).isEmpty();
    }

    @Test
    void oneTimerServesEveryStartedCallAndEachOverrunsAtItsOwnDeadline() {
        for (String pid : List.of("p1", "p2", "p3")) {
            dispatch.call(pid, () -> new Outcome.Assigned(account(pid)), () -> overran(pid));
        }
        // started as a simulation starts them (the body's time passes outside any thread)
        var p1 = (ListenerDispatch.Call) calls.queued.poll();
        var p2 = (ListenerDispatch.Call) calls.queued.poll();
        var p3 = (ListenerDispatch.Call) calls.queued.poll();
        Runnable p1Returned = p1.begin(null);
        timer.advance(D / 2);
        p2.begin(null);
        timer.advance(D / 4);
        Runnable p3Returned = p3.begin(null);
        assertThat(timer.tasks).as("one timer for three running calls").hasSize(1);

        p1Returned.run(); // p1 returns in time: its deadline passes without effect
        p1.settle(new Outcome.Assigned(account("p1")));
        timer.advance(3 * D / 4 - 1); // past p1's deadline, 1 ns before p2's
        assertThat(p2.reported()).isFalse();
        assertThat(results).containsExactly("p1=" + new Outcome.Assigned(account("p1")));
        assertThat(timer.tasks).hasSize(1);

        timer.advance(1); // D after p2 started
        assertThat(results).containsExactly("p1=" + new Outcome.Assigned(account("p1")), "p2=" + overran("p2"));

        p3Returned.run();
        p3.settle(new Outcome.Assigned(account("p3")));
        timer.advance(D);
        assertThat(results).hasSize(3).endsWith("p3=" + new Outcome.Assigned(account("p3")));
        assertThat(timer.tasks).as("nothing left to time").isEmpty();
    }

    private static Outcome overran(String pid) {
        return new Outcome.Overran(account(pid), "onAssigned did not return in time");
    }

    @Test
    void anOverrunOnAssignedLogsOutViaOnRevokedThenReportsTheFailureAndHoldsNothing() {
        PidTracker tracker = new PidTracker();
        tracker.resetSession(S);
        tracker.resume();
        PidNode adding = PidNode.instruction("p1", PidState.ADDING, new Epoch(1), S, payload());
        assertThat(tracker.onNode(NodeView.of(tracker.generation(), ROOT + "/p1", adding, 0, 1001)))
                .singleElement()
                .isInstanceOf(Action.Assign.class);

        List<Action> overrun = tracker.onCallbackDone(
                "p1", new Outcome.Overran(account("p1"), "onAssigned did not return within 5000 ms"));

        assertThat(overrun).singleElement().isInstanceOf(Action.Revoke.class);
        assertThat(((Action.Revoke) overrun.get(0)).account()).isEqualTo(account("p1"));
        assertThat(tracker.heldIds()).isEmpty();
        List<Action> after = tracker.onCallbackDone("p1", new Outcome.Revoked());
        assertThat(after).singleElement().isInstanceOf(Action.Write.class);
        PidNode report = ((Action.Write) after.get(0)).node();
        assertThat(report.state()).isEqualTo(PidState.ADDING);
        assertThat(report.error()).contains("did not return within 5000 ms");
        assertThat(tracker.heldIds()).isEmpty();
    }

    @Test
    void aCallNotStartedBecauseTheLeaseLapsedIsDecidedAgainOnResumeWithoutAFailure() {
        PidTracker tracker = new PidTracker();
        tracker.resetSession(S);
        tracker.resume();
        PidNode adding = PidNode.instruction("p1", PidState.ADDING, new Epoch(1), S, payload());
        tracker.onNode(NodeView.of(tracker.generation(), ROOT + "/p1", adding, 0, 1001));

        assertThat(tracker.onCallbackDone("p1", new Outcome.NotStarted())).isEmpty();
        assertThat(tracker.suspend()).isEmpty();
        assertThat(tracker.resume()).singleElement().isInstanceOf(Action.Assign.class);
    }

    static final long S = 0x5eed;
    static final String ROOT = "/modules/fin#risk#scorer/box-5eed-pids";

    static AccountPayload payload() {
        return new AccountPayload(100, 0, new SealedSecret("k1", "pw".getBytes(StandardCharsets.UTF_8)), Map.of());
    }

    static PidAccount account(String pid) {
        return new PidAccount(pid, "pw", 100, 0, Map.of());
    }
}
