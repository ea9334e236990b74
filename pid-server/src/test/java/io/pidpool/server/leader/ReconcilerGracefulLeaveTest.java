package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A graceful close is not a failure: it raises no mass-failure alert. */
class ReconcilerGracefulLeaveTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final Epoch E = new Epoch(2);
    static final Duration GRACE = Duration.ofSeconds(2);
    static final long T0 = 1_000_000_000L;

    final Reconciler reconciler =
            new Reconciler(ViewFixture.LAYOUT, LeaderSettings.defaults().withGrace(GRACE));
    final TermBookkeeping state = new TermBookkeeping();
    final PlacementPolicy policy = new PlannerPlacement(PlannerPolicy.defaults(GRACE));
    final ViewFixture fx = new ViewFixture();
    final DbView db = new DbFixture().module(M, 1, "p1", "p2").view();

    Reconciler.Decision decide(long now) {
        Reconciler.Decision d = reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), now);
        d.intents().forEach(i -> state.replay(new TermEvent.WriteIssued(i)));
        d.intents().forEach(i -> state.replay(new TermEvent.WriteSettled(i)));
        return d;
    }

    @Test
    void closingAModulesOnlyInstanceRaisesNoBrakeAlert() {
        InstanceKey only = fx.instance(M, "i-1", 11, true);
        for (String pid : List.of("p1", "p2")) {
            fx.pid(only, pid, PidState.ADDED, E, 11);
        }
        assertThat(decide(T0).intents()).isEmpty();
        // close(): DELETED for everything it held, then its ephemeral node goes
        for (String pid : List.of("p1", "p2")) {
            fx.pid(only, pid, PidState.DELETED, E, 11);
        }
        fx.vanish(only);
        var left = decide(T0 + 1);
        var later = decide(T0 + 2);
        assertThat(left.alerts()).noneMatch(a -> a.contains("mass-failure brake"));
        assertThat(later.alerts()).noneMatch(a -> a.contains("mass-failure brake"));
        assertThat(state.alertKeys()).noneMatch(k -> k.startsWith("signal:brake:"));
    }

    @Test
    void theOnlyInstanceCrashingRaisesNoBrakeAlertEither() {
        InstanceKey only = fx.instance(M, "i-1", 11, true);
        for (String pid : List.of("p1", "p2")) {
            fx.pid(only, pid, PidState.ADDED, E, 11);
        }
        decide(T0);
        fx.vanish(only);
        var crashed = decide(T0 + 1);
        assertThat(crashed.alerts()).noneMatch(a -> a.contains("mass-failure brake"));
    }
}
