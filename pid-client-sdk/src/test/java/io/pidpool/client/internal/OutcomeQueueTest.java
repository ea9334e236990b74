package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pidpool.client.PidAccount;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class OutcomeQueueTest {
    /** The state thread, run by hand. */
    private final Queue<Runnable> stateThread = new ArrayDeque<>();

    private final List<String> applied = new ArrayList<>();
    private final OutcomeQueue queue =
            new OutcomeQueue(stateThread::add, (pid, outcome) -> applied.add(pid + ":" + name(outcome)));

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(OutcomeQueue.class);
    private Level level;

    @BeforeEach
    void captureLogs() {
        logs.start();
        logger.addAppender(logs);
        level = logger.getLevel();
        logger.setLevel(Level.INFO);
    }

    @AfterEach
    void restoreLogs() {
        logger.detachAppender(logs);
        logger.setLevel(level);
    }

    @Test
    void outcomesThatArriveTogetherAreAppliedByOneTaskInArrivalOrder() {
        queue.done("p1", assigned("p1"));
        queue.done("p2", new Outcome.Failed("login refused"));
        queue.done("p3", new Outcome.Revoked("rebalance"));

        assertThat(stateThread).hasSize(1);
        assertThat(applied).isEmpty();
        runStateThread();
        assertThat(applied).containsExactly("p1:Assigned", "p2:Failed", "p3:Revoked");
    }

    @Test
    void anOutcomeAfterTheDrainStartedPostsAnotherDrain() {
        queue.done("p1", assigned("p1"));
        runStateThread();
        queue.done("p2", assigned("p2"));

        assertThat(stateThread).hasSize(1);
        runStateThread();
        assertThat(applied).containsExactly("p1:Assigned", "p2:Assigned");
    }

    @Test
    void anOutcomeQueuedWhileApplyingIsAppliedInTheSameDrain() {
        List<String> order = new ArrayList<>();
        var reentrant = new OutcomeQueue[1];
        reentrant[0] = new OutcomeQueue(stateThread::add, (pid, outcome) -> {
            order.add(pid);
            if (pid.equals("p1")) {
                reentrant[0].done("p2", assigned("p2")); // e.g. a callback that returned meanwhile
            }
        });
        reentrant[0].done("p1", assigned("p1"));
        runStateThread();

        assertThat(order).containsExactly("p1", "p2");
        assertThat(stateThread).as("a second drain, which finds nothing").hasSize(1);
        runStateThread();
        assertThat(order).containsExactly("p1", "p2");
    }

    @Test
    void anOutcomeThatFailsToApplyDoesNotHoldUpTheOthers() {
        var failing = new OutcomeQueue(stateThread::add, (pid, outcome) -> {
            if (pid.equals("p1")) {
                throw new IllegalStateException("boom");
            }
            applied.add(pid);
        });
        failing.done("p1", assigned("p1"));
        failing.done("p2", assigned("p2"));
        runStateThread();

        assertThat(applied).containsExactly("p2");
        assertThat(lines()).contains("Assigned 1 PID: p2");
    }

    @Test
    void aBurstIsLoggedOncePerKindAndReason() {
        queue.done("p1", assigned("p1"));
        queue.done("p2", assigned("p2"));
        queue.done("p3", new Outcome.Revoked("rebalance"));
        queue.done("p4", new Outcome.Failed("login refused")); // logged where it happened
        queue.done("p5", new Outcome.Revoked("session lost"));
        queue.done("p6", new Outcome.Updated(account("p6")));
        runStateThread();

        assertThat(lines())
                .containsExactly(
                        "Assigned 2 PIDs: p1, p2",
                        "Revoked 1 PID (rebalance): p3",
                        "Revoked 1 PID (session lost): p5",
                        "Updated 1 PID: p6");
    }

    @Test
    void aLargeBurstIsSplitIntoBoundedLines() {
        for (int i = 1; i <= 250; i++) {
            queue.done("p" + i, assigned("p" + i));
        }
        runStateThread();

        List<String> lines = lines();
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0))
                .startsWith("Assigned 250 PIDs (1-100): p1, p2, ")
                .endsWith(", p100");
        assertThat(lines.get(2))
                .startsWith("Assigned 250 PIDs (201-250): p201, ")
                .endsWith(", p250");
        assertThat(applied).hasSize(250);
    }

    @Test
    void nothingIsFormattedBelowInfo() {
        logger.setLevel(Level.WARN);
        queue.done("p1", assigned("p1"));
        runStateThread();

        assertThat(applied).containsExactly("p1:Assigned");
        assertThat(logs.list).isEmpty();
    }

    private void runStateThread() {
        int queued = stateThread.size();
        for (int i = 0; i < queued; i++) {
            stateThread.poll().run();
        }
    }

    private List<String> lines() {
        return logs.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    private static String name(Outcome outcome) {
        return outcome.getClass().getSimpleName();
    }

    private static Outcome assigned(String pid) {
        return new Outcome.Assigned(account(pid));
    }

    private static PidAccount account(String pid) {
        return new PidAccount(pid, "pw", 100, 0, Map.of());
    }
}
