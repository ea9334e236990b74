package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A write whose outcome is unknown (connection loss) keeps its PID and paths untouchable until proven. */
class ReconcilerDoubtTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final Epoch E = new Epoch(2);
    static final Duration GRACE = Duration.ofSeconds(2);
    static final long T0 = 1_000_000_000L;

    final LeaderSettings settings = LeaderSettings.defaults().withGrace(GRACE);
    final Reconciler reconciler = new Reconciler(ViewFixture.LAYOUT, settings);
    final TermBookkeeping state = new TermBookkeeping();
    final PlacementPolicy policy =
            new PlannerPlacement(PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ZERO));
    final ViewFixture fx = new ViewFixture();
    final DbView db = new DbFixture().module(M, 2, "p1", "p2", "p3", "p4").view();

    Reconciler.Decision decide(long now) {
        return reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), now);
    }

    static List<Intent> about(Reconciler.Decision d, String pid) {
        return d.intents().stream().filter(i -> pid.equals(i.pid())).toList();
    }

    /** Hands out p1..p4; every add but p1's is answered. Returns p1's add. */
    Intent handOutWithP1Lost() {
        fx.instance(M, "i-1", 11, true);
        fx.instance(M, "i-2", 22, true);
        var first = decide(T0);
        first.intents().forEach(i -> state.replay(new TermEvent.WriteIssued(i)));
        Intent lost = null;
        for (Intent add : first.intents()) {
            if (add.pid().equals("p1")) {
                lost = add;
                continue;
            }
            fx.pid(
                    add.holder(),
                    add.pid(),
                    PidState.ADDING,
                    E,
                    add.holder().instance().value().equals("i-1") ? 11 : 22);
            state.replay(new TermEvent.WriteSettled(add));
        }
        assertThat(lost).isNotNull();
        return lost;
    }

    @Test
    void aPidWhoseAddWasLostIsNotPlacedAgainBeforeTheViewIsProven() {
        Intent lost = handOutWithP1Lost();
        // the connection broke after the request left: ZooKeeper created the node, the leader never heard
        state.replay(TermEvent.outcome(lost, ErrorCode.UNAVAILABLE));
        var next = decide(T0 + 1);
        assertThat(about(next, "p1"))
                .as("intents about p1 while its add is in doubt")
                .isEmpty();
        assertThat(state.pidInFlight("p1")).isTrue();
        assertThat(state.addsInFlight()).containsKey("p1"); // the planner counts it where it was sent
        assertThat(state.writesInDoubt()).isEqualTo(1);
    }

    @Test
    void aRescanAlreadyRunningWhenTheDoubtAroseProvesNothing() {
        Intent lost = handOutWithP1Lost();
        state.replay(new TermEvent.RescanStarted(state.rescansStarted() + 1)); // may read before the write lands
        long running = state.rescansStarted();
        state.replay(TermEvent.outcome(lost, ErrorCode.UNAVAILABLE));
        state.replay(new TermEvent.ViewProven(running));
        assertThat(state.pidInFlight("p1")).isTrue();
        assertThat(about(decide(T0 + 1), "p1")).isEmpty();
    }

    @Test
    void aRescanStartedAfterTheDoubtSettlesItAndTheLandedNodeIsKept() {
        Intent lost = handOutWithP1Lost();
        state.replay(TermEvent.outcome(lost, ErrorCode.UNAVAILABLE));
        long rescan = state.rescansStarted() + 1;
        state.replay(new TermEvent.RescanStarted(rescan));
        // the rescan reads the node the lost write created, and is replayed into the view
        fx.pid(
                lost.holder(),
                "p1",
                PidState.ADDING,
                E,
                lost.holder().instance().value().equals("i-1") ? 11 : 22);
        state.replay(new TermEvent.ViewProven(rescan));
        assertThat(state.pidInFlight("p1")).isFalse();
        assertThat(state.inFlight(lost.writes().get(0).path())).isFalse();
        assertThat(state.writesInDoubt()).isZero();
        assertThat(about(decide(T0 + 1), "p1"))
                .as("p1 is held where the lost write put it")
                .isEmpty();
    }

    @Test
    void aLostWriteThatDidNotLandIsPlacedOnceTheViewIsProven() {
        Intent lost = handOutWithP1Lost();
        state.replay(TermEvent.outcome(lost, ErrorCode.UNAVAILABLE));
        long rescan = state.rescansStarted() + 1;
        state.replay(new TermEvent.RescanStarted(rescan));
        state.replay(new TermEvent.ViewProven(rescan)); // found nothing of p1
        var next = decide(T0 + 1);
        assertThat(about(next, "p1")).extracting(Intent::kind).containsExactly(Intent.Kind.ADD);
    }

    @Test
    void aRefusedWriteIsSettledAtOnce() {
        Intent lost = handOutWithP1Lost();
        state.replay(TermEvent.outcome(lost, ErrorCode.CONFLICT)); // ZooKeeper refused it: not applied
        assertThat(state.pidInFlight("p1")).isFalse();
        assertThat(state.writesInDoubt()).isZero();
    }

    @Test
    void rescanNumbersThatDoNotGoUpOrWereNeverStartedAreRefused() {
        Intent lost = handOutWithP1Lost();
        state.replay(TermEvent.outcome(lost, ErrorCode.UNAVAILABLE));
        state.replay(new TermEvent.RescanStarted(3));
        assertThatThrownBy(() -> state.replay(new TermEvent.RescanStarted(3)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("numbered upwards");
        assertThatThrownBy(() -> state.replay(new TermEvent.ViewProven(4)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has not started");
        assertThat(state.rescansStarted()).isEqualTo(3);
        assertThat(state.writesInDoubt()).isEqualTo(1);
        assertThat(state.pidInFlight("p1")).isTrue();
    }
}
