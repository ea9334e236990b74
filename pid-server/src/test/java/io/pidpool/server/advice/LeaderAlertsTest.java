package io.pidpool.server.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.leader.PlanSignals;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The leader's texts (Reconciler, PlanSignals) as the alert service reads them. */
class LeaderAlertsTest {
    static final Instant NOW = Instant.parse("2026-11-16T08:00:00Z");

    @Test
    void aCooldownRaisesAPidCooldownAlertAndItsEndResolvesIt() {
        var raise = (LeaderAlerts.Raise) LeaderAlerts.classify("ALERT PID u7 failed 3 times; cooldown for PT10M", NOW)
                .orElseThrow();
        assertThat(raise.alert().key()).isEqualTo("PID_COOLDOWN:u7");
        assertThat(raise.alert().kind()).isEqualTo(AlertKind.PID_COOLDOWN);
        assertThat(raise.alert().subject()).isEqualTo("u7");
        assertThat(raise.alert().message()).isEqualTo("PID u7 failed 3 times; cooldown for PT10M");

        var resolve = (LeaderAlerts.Resolve)
                LeaderAlerts.classify("PID u7 leaves cooldown", NOW).orElseThrow();
        assertThat(resolve.key()).isEqualTo("PID_COOLDOWN:u7");
    }

    @Test
    void theMassFailureBrakeIsCriticalAndResolvedWhenTheLeaderClearsItsSignal() {
        var raise = (LeaderAlerts.Raise) LeaderAlerts.classify(
                        "ALERT mass-failure brake engaged in fin#risk#scorer: 3 of 4 instances vanished; not"
                                + " redistributing (maintenance mode)",
                        NOW)
                .orElseThrow();
        assertThat(raise.alert().key()).isEqualTo("BRAKE_ENGAGED:fin#risk#scorer");
        assertThat(raise.alert().severity()).isEqualTo(Severity.CRITICAL);
        assertThat(LeaderAlerts.resolvedBy("signal:brake:fin#risk#scorer")).contains("BRAKE_ENGAGED:fin#risk#scorer");
        assertThat(LeaderAlerts.resolvedBy("signal:throttled:fin#risk#scorer")).isEmpty();
        assertThat(LeaderAlerts.resolvedBy("stuck:/x@1:2")).isEmpty();
    }

    @Test
    void pidsWithNowhereToGoAreALeaderEventOfTheirModule() {
        var raise = (LeaderAlerts.Raise)
                LeaderAlerts.classify("fin#risk#scorer: 12 PIDs have no live instance to go to", NOW)
                        .orElseThrow();
        assertThat(raise.alert().key()).isEqualTo("LEADER_EVENT:fin#risk#scorer:unassignable");
        assertThat(LeaderAlerts.resolvedBy("signal:unassignable:fin#risk#scorer"))
                .contains("LEADER_EVENT:fin#risk#scorer:unassignable");
    }

    @Test
    void otherAlertLinesAreLeaderEventsKeyedByTheirTextAndTheRestIsOnlyLogged() {
        String stuck = "ALERT fin#risk#scorer/host-1 has not answered DELETING of u1 within PT5S";
        var first = (LeaderAlerts.Raise) LeaderAlerts.classify(stuck, NOW).orElseThrow();
        var again = (LeaderAlerts.Raise)
                LeaderAlerts.classify(stuck, NOW.plusSeconds(9)).orElseThrow();
        assertThat(first.alert().kind()).isEqualTo(AlertKind.LEADER_EVENT);
        assertThat(first.alert().subject()).isEqualTo("cluster");
        assertThat(again.alert().key()).isEqualTo(first.alert().key());
        assertThat(LeaderAlerts.classify("PID u1 could not be taken up by m/i: refused", NOW))
                .isEmpty();
        assertThat(LeaderAlerts.classify("move throttle held back 4 moves in m", NOW))
                .isEmpty();
    }

    @Test
    void theLeadersWordsForPlanSignalsAreTheFormsReadHere() {
        ModuleKey m = ModuleKey.parse("fin#risk#scorer");
        var brake = new PlanSignal.BrakeEngaged(m, 3, 4);
        assertThat(PlanSignals.describe(brake))
                .isEqualTo("ALERT mass-failure brake engaged in fin#risk#scorer: 3 of 4 instances vanished; not"
                        + " redistributing (maintenance mode)");
        var braked = (LeaderAlerts.Raise)
                LeaderAlerts.classify(PlanSignals.describe(brake), NOW).orElseThrow();
        assertThat(braked.alert().key()).isEqualTo("BRAKE_ENGAGED:fin#risk#scorer");
        assertThat(LeaderAlerts.resolvedBy("signal:" + PlanSignals.alertKey(brake)))
                .contains("BRAKE_ENGAGED:fin#risk#scorer");

        var nowhere = new PlanSignal.Unassignable(m, Set.of("u1", "u2"));
        var unassignable = (LeaderAlerts.Raise)
                LeaderAlerts.classify(PlanSignals.describe(nowhere), NOW).orElseThrow();
        assertThat(unassignable.alert().key()).isEqualTo("LEADER_EVENT:fin#risk#scorer:unassignable");
        assertThat(LeaderAlerts.resolvedBy("signal:" + PlanSignals.alertKey(nowhere)))
                .contains("LEADER_EVENT:fin#risk#scorer:unassignable");

        var throttled = new PlanSignal.Throttled(m, 4);
        assertThat(PlanSignals.alertKey(throttled)).isEqualTo("throttled:fin#risk#scorer");
        assertThat(LeaderAlerts.classify(PlanSignals.describe(throttled), NOW)).isEmpty();
        assertThat(PlanSignals.alertKey(new PlanSignal.AwaitingRelease(m, Set.of("u1"))))
                .as("only logged")
                .isNull();
    }
}
