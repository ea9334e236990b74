package io.pidpool.core.advice;

import static io.pidpool.core.advice.Fixtures.config;
import static io.pidpool.core.advice.Fixtures.key;
import static io.pidpool.core.advice.Fixtures.pid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.advice.Fixtures.Snap;
import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.PidAvailability;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class AlertRulesTest {
    static final UsageProjector PROJECTOR = new UsageProjector(DemandModel.OBSERVED);
    static final AlertRules RULES = new AlertRules(AlertPolicy.defaults());
    static final Instant T0 = Fixtures.MID_MONTH;
    static final Instant T1 = T0.plus(Duration.ofMinutes(5));

    static AlertEvaluation evaluate(
            AlertRules rules, Snap snap, List<PlanSignal> signals, List<Alert> open, Instant now) {
        return rules.evaluate(PROJECTOR.project(snap.build()), signals, open, now);
    }

    static AlertEvaluation evaluate(Snap snap) {
        return evaluate(RULES, snap, List.of(), List.of(), T0);
    }

    static List<String> keys(List<Alert> alerts) {
        return alerts.stream().map(Alert::key).toList();
    }

    /** One module with no future demand (so nothing is projected) and PIDs at the given usage. */
    static Snap usage(long... used) {
        Snap snap = new Snap().module("a", 0);
        for (int i = 0; i < used.length; i++) {
            snap.pid(pid("p" + i, "a", 1_000, used[i]));
        }
        return snap;
    }

    @Test
    void pidUtilisationRaisesTheHighestThresholdCrossedOnly() {
        AlertEvaluation result = evaluate(usage(799, 800, 999, 1_000, 1_200));

        assertThat(keys(result.open()))
                .filteredOn(k -> k.startsWith("PID_UTILISATION"))
                .containsExactly(
                        "PID_UTILISATION:p1:80",
                        "PID_UTILISATION:p2:80",
                        "PID_UTILISATION:p3:100",
                        "PID_UTILISATION:p4:100");
        Alert p3 = result.open().stream()
                .filter(a -> a.key().equals("PID_UTILISATION:p3:100"))
                .findFirst()
                .orElseThrow();
        assertThat(p3.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(p3.kind()).isEqualTo(AlertKind.PID_UTILISATION);
        assertThat(p3.subject()).isEqualTo("p3");
        assertThat(p3.firstSeen()).isEqualTo(T0);
        assertThat(p3.message()).contains("PID p3 of dept#a#sys has used 1000 of its monthly quota 1000 (100.0 %)");
        assertThat(result.open().stream()
                        .filter(a -> a.key().equals("PID_UTILISATION:p1:80"))
                        .findFirst()
                        .orElseThrow()
                        .severity())
                .isEqualTo(Severity.WARNING);
    }

    @Test
    void moduleUtilisationSumsItsPids() {
        // 1,700 of 2,000: 85 %
        AlertEvaluation result = evaluate(usage(700, 1_000));

        assertThat(keys(result.open())).contains("MODULE_UTILISATION:dept#a#sys:80");
        assertThat(keys(result.open())).doesNotContain("MODULE_UTILISATION:dept#a#sys:100");
    }

    @Test
    void thresholdsAreConfigurable() {
        AlertRules rules = new AlertRules(AlertPolicy.defaults().withUtilisationPercents(List.of(95, 50)));

        AlertEvaluation result = evaluate(rules, usage(500, 949, 950), List.of(), List.of(), T0);

        assertThat(keys(result.open()))
                .filteredOn(k -> k.startsWith("PID_"))
                .containsExactly("PID_UTILISATION:p0:50", "PID_UTILISATION:p1:50", "PID_UTILISATION:p2:95");
        assertThat(evaluate(
                                new AlertRules(AlertPolicy.defaults().withPidUtilisation(false)),
                                usage(1_000),
                                List.of(),
                                List.of(),
                                T0)
                        .open())
                .extracting(Alert::kind)
                .doesNotContain(AlertKind.PID_UTILISATION)
                .contains(AlertKind.MODULE_UTILISATION);
    }

    @Test
    void aQuotaOfZeroCountsAsCrossedOnceUsed() {
        AlertEvaluation result =
                evaluate(new Snap().module("a", 0).pid(pid("unused", "a", 0, 0)).pid(pid("used", "a", 0, 1)));

        assertThat(keys(result.open()))
                .contains("PID_UTILISATION:used:100")
                .noneMatch(k -> k.startsWith("PID_UTILISATION:unused"));
    }

    @Test
    void projectedOverageAboveTheThresholdRaisesAnAlert() {
        // 2,000 more to come on one PID with 500 left: 1,500 over, 10 + 500 * 0.02 = 20.
        Snap snap = new Snap().module("a", 2_000).pid(pid("p", "a", 10_000, 9_500));

        AlertEvaluation any = evaluate(snap);
        AlertEvaluation above20 = evaluate(
                new AlertRules(AlertPolicy.defaults().withProjectedCostAbove(new BigDecimal("20"))),
                snap,
                List.of(),
                List.of(),
                T0);
        AlertEvaluation above19 = evaluate(
                new AlertRules(AlertPolicy.defaults().withProjectedCostAbove(new BigDecimal("19.99"))),
                snap,
                List.of(),
                List.of(),
                T0);

        Alert alert = any.open().stream()
                .filter(a -> a.kind() == AlertKind.PROJECTED_OVERAGE)
                .findFirst()
                .orElseThrow();
        assertThat(alert.key()).isEqualTo("PROJECTED_OVERAGE:dept#a#sys");
        assertThat(alert.severity()).isEqualTo(Severity.WARNING);
        assertThat(alert.message())
                .contains("module dept#a#sys is projected to use 1500 commands above quota by the end of 2026-11,"
                        + " costing 20.00");
        assertThat(above20.open()).extracting(Alert::kind).doesNotContain(AlertKind.PROJECTED_OVERAGE);
        assertThat(above19.open()).extracting(Alert::kind).contains(AlertKind.PROJECTED_OVERAGE);
        assertThat(evaluate(usage(0)).open()).extracting(Alert::kind).doesNotContain(AlertKind.PROJECTED_OVERAGE);
    }

    @Test
    void demandBeyondTheHardLimitsRaisesACriticalRefusalAlert() {
        AlertEvaluation result = evaluate(new Snap()
                .module("a", 5_000)
                .pid(new io.pidpool.core.advice.PidUsage("p", key("a"), 1_000, 1_000, 0, PidAvailability.ACTIVE)));

        Alert alert = result.open().stream()
                .filter(a -> a.kind() == AlertKind.PROJECTED_REFUSAL)
                .findFirst()
                .orElseThrow();
        assertThat(alert.severity()).isEqualTo(Severity.CRITICAL);
        assertThat(alert.message())
                .contains("projected to need 3000 commands more than the hard limits of its 1 ACTIVE");
    }

    @Test
    void aPidInCooldownRaisesAnAlert() {
        AlertEvaluation result = evaluate(new Snap()
                .module("a", 0)
                .pid(pid("cool", "a", 1_000, 0, PidAvailability.COOLDOWN))
                .pid(pid("off", "a", 1_000, 0, PidAvailability.DISABLED)));

        assertThat(keys(result.open())).containsExactly("PID_COOLDOWN:cool");
        assertThat(result.open().get(0).severity()).isEqualTo(Severity.WARNING);
        assertThat(result.open().get(0).message()).contains("PID cool of dept#a#sys is in cooldown");
    }

    @Test
    void theMassFailureBrakeRaisesACriticalAlertPerModule() {
        List<PlanSignal> signals = List.of(
                new PlanSignal.BrakeEngaged(key("a"), 3, 4),
                new PlanSignal.Throttled(key("a"), 7),
                new PlanSignal.Unassignable(key("a"), Set.of("x")));

        AlertEvaluation result = evaluate(RULES, new Snap().module("a", 0), signals, List.of(), T0);

        assertThat(keys(result.open())).containsExactly("BRAKE_ENGAGED:dept#a#sys");
        assertThat(result.open().get(0).severity()).isEqualTo(Severity.CRITICAL);
        assertThat(result.open().get(0).message()).contains("3 of its 4 instances vanished");
    }

    @Test
    void anAlertThatStillHoldsKeepsItsFirstSeenAndTakesTheNewMessage() {
        AlertEvaluation first = evaluate(RULES, usage(850), List.of(), List.of(), T0);
        AlertEvaluation second = evaluate(RULES, usage(900), List.of(), first.open(), T1);

        assertThat(keys(first.raised())).containsExactly("MODULE_UTILISATION:dept#a#sys:80", "PID_UTILISATION:p0:80");
        assertThat(second.raised()).isEmpty();
        assertThat(second.resolved()).isEmpty();
        assertThat(second.changed()).isFalse();
        assertThat(keys(second.stillOpen())).containsExactlyElementsOf(keys(first.open()));
        assertThat(second.stillOpen()).allSatisfy(a -> assertThat(a.firstSeen()).isEqualTo(T0));
        assertThat(second.stillOpen().get(1).message()).contains("used 900");
        assertThat(second.at()).isEqualTo(T1);
    }

    @Test
    void crossingAHigherThresholdResolvesTheLowerOneAndRaisesTheHigher() {
        AlertEvaluation first = evaluate(RULES, usage(850), List.of(), List.of(), T0);
        AlertEvaluation second = evaluate(RULES, usage(1_000), List.of(), first.open(), T1);

        assertThat(keys(second.raised()))
                .containsExactly("MODULE_UTILISATION:dept#a#sys:100", "PID_UTILISATION:p0:100");
        assertThat(keys(second.resolved()))
                .containsExactly("MODULE_UTILISATION:dept#a#sys:80", "PID_UTILISATION:p0:80");
        assertThat(second.raised()).allSatisfy(a -> assertThat(a.firstSeen()).isEqualTo(T1));
        assertThat(second.changed()).isTrue();
    }

    @Test
    void aConditionThatNoLongerHoldsIsResolvedAsItWasStored() {
        AlertEvaluation engaged = evaluate(
                RULES,
                new Snap().module("a", 0).pid(pid("cool", "a", 1_000, 0, PidAvailability.COOLDOWN)),
                List.of(new PlanSignal.BrakeEngaged(key("a"), 2, 2)),
                List.of(),
                T0);
        AlertEvaluation released = evaluate(
                RULES, new Snap().module("a", 0).pid(pid("cool", "a", 1_000, 0)), List.of(), engaged.open(), T1);

        assertThat(released.open()).isEmpty();
        assertThat(released.resolved()).containsExactlyElementsOf(engaged.open());
        assertThat(released.raised()).isEmpty();
    }

    @Test
    void pidAlertsAreCappedPreferringOpenOnesAndTheRestAreCounted() {
        AlertRules rules = new AlertRules(AlertPolicy.defaults().withMaxPidAlerts(2));
        Snap snap = usage(800, 800, 1_000, 800);
        AlertEvaluation first = evaluate(rules, snap, List.of(), List.of(), T0);

        // p2 is critical, then by key: p0
        assertThat(keys(first.open()))
                .filteredOn(k -> k.startsWith("PID_"))
                .containsExactly("PID_ALERTS_TRUNCATED:cluster", "PID_UTILISATION:p0:80", "PID_UTILISATION:p2:100");
        Alert truncated = first.open().get(1);
        assertThat(truncated.kind()).isEqualTo(AlertKind.PID_ALERTS_TRUNCATED);
        assertThat(truncated.message()).startsWith("2 more PID alerts hold than the 2 kept open");

        // p3 becomes critical, but the open ones stay open rather than churning.
        AlertEvaluation second = evaluate(rules, usage(800, 800, 1_000, 1_000), List.of(), first.open(), T1);
        assertThat(keys(second.open()))
                .filteredOn(k -> k.startsWith("PID_"))
                .containsExactly("PID_ALERTS_TRUNCATED:cluster", "PID_UTILISATION:p0:80", "PID_UTILISATION:p2:100");
        assertThat(second.raised()).isEmpty();
    }

    @Test
    void resultsAreSortedByKeyAndDeterministic() {
        Snap snap = new Snap()
                .module(config("b", 1, 0, 0), 1, 0)
                .module("a", 0)
                .pid(pid("z", "b", 1_000, 1_000))
                .pid(pid("y", "a", 1_000, 1_000, PidAvailability.COOLDOWN));

        AlertEvaluation result = evaluate(snap);

        assertThat(keys(result.open())).isSorted();
        assertThat(evaluate(snap)).isEqualTo(result);
    }

    @Test
    void badInputIsRejected() {
        Alert alert = new Alert("K", AlertKind.PID_COOLDOWN, Severity.WARNING, "p", "m", T0);
        UsageReport report = PROJECTOR.project(usage(0).build());

        assertThatThrownBy(() -> RULES.evaluate(report, List.of(), List.of(alert, alert), T0))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.field()).isEqualTo("open");
                });
        assertThatThrownBy(() -> AlertPolicy.defaults().withUtilisationPercents(List.of(80, 80)))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("utilisationPercents"));
        assertThatThrownBy(() -> AlertPolicy.defaults().withUtilisationPercents(List.of(0)))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> AlertPolicy.defaults().withProjectedCostAbove(new BigDecimal("-0.01")))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> AlertPolicy.defaults().withMaxPidAlerts(-1)).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> new Alert(" ", AlertKind.PID_COOLDOWN, Severity.WARNING, "p", "m", T0))
                .isInstanceOf(PidPoolException.class);
    }
}
