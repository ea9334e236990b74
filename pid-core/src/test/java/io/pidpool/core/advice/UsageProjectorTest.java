package io.pidpool.core.advice;

import static io.pidpool.core.advice.Fixtures.MID_MONTH;
import static io.pidpool.core.advice.Fixtures.TARIFF;
import static io.pidpool.core.advice.Fixtures.UTC;
import static io.pidpool.core.advice.Fixtures.config;
import static io.pidpool.core.advice.Fixtures.key;
import static io.pidpool.core.advice.Fixtures.pid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.advice.Fixtures.Snap;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.QuotaMonth;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class UsageProjectorTest {
    static final UsageProjector OBSERVED = new UsageProjector(DemandModel.OBSERVED);

    static Map<String, PidProjection> byId(UsageReport report) {
        return report.pids().stream().collect(Collectors.toMap(PidProjection::id, Function.identity()));
    }

    @Test
    void reportsTheMonthAndHowMuchOfItHasPassed() {
        UsageReport report = OBSERVED.project(new Snap().module("a", 0).build());

        assertThat(report.month()).isEqualTo(QuotaMonth.of(2026, 11));
        assertThat(report.at()).isEqualTo(MID_MONTH);
        assertThat(report.elapsed()).isEqualTo(Duration.ofDays(15));
        assertThat(report.length()).isEqualTo(Duration.ofDays(30));
        assertThat(report.elapsedFraction()).isEqualTo(0.5);
    }

    @Test
    void demandWithinTheQuotaLeftCostsNothingAndFillsMostRemainingFirst() {
        // 10,000 used in half a month: 10,000 more to come; 4,000 + 6,000 left.
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 10_000)
                .pid(pid("p1", "a", 10_000, 6_000))
                .pid(pid("p2", "a", 10_000, 4_000))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.futureDemand()).isEqualTo(10_000);
        assertThat(a.used()).isEqualTo(10_000);
        assertThat(a.quota()).isEqualTo(20_000);
        assertThat(a.remaining()).isEqualTo(10_000);
        assertThat(a.utilisation()).isEqualTo(0.5);
        assertThat(a.projectedUsed()).isEqualTo(20_000);
        assertThat(a.slack()).isZero();
        assertThat(a.shortfall()).isZero();
        assertThat(a.projectedOverage()).isZero();
        assertThat(a.projectedOverageCost()).isEqualByComparingTo("0");
        assertThat(byId(report).get("p1").projectedUsed()).isEqualTo(10_000);
        assertThat(byId(report).get("p2").projectedUsed()).isEqualTo(10_000);
        assertThat(byId(report).get("p1").remaining()).isEqualTo(4_000);
        assertThat(byId(report).get("p1").utilisation()).isEqualTo(0.6);
    }

    @Test
    void demandBeyondTheQuotaLeftIsSpreadOverThePidsAndPricedPerPid() {
        // 16,000 more to come, 10,000 left: 6,000 of overage, 3,000 on each PID.
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 16_000)
                .pid(pid("p1", "a", 10_000, 6_000))
                .pid(pid("p2", "a", 10_000, 4_000))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.futureDemand()).isEqualTo(16_000);
        assertThat(a.shortfall()).isEqualTo(6_000);
        assertThat(a.projectedOverage()).isEqualTo(6_000);
        // per PID: 1,000 * 0.01 + 2,000 * 0.02 = 50
        assertThat(a.projectedOverageCost()).isEqualByComparingTo("100");
        PidProjection p1 = byId(report).get("p1");
        assertThat(p1.projectedUsed()).isEqualTo(13_000);
        assertThat(p1.projectedOverage()).isEqualTo(3_000);
        assertThat(p1.projectedOverageCost()).isEqualByComparingTo("50");
        assertThat(report.totalProjectedOverageCost()).isEqualByComparingTo("100");
        assertThat(report.totalProjectedOverage()).isEqualTo(6_000);
    }

    @Test
    void aPidAlreadyDeepInOverageGetsNoMoreUntilTheOthersCatchUp() {
        // p1 is 2,000 over, p2 has 1,000 left; 2,500 to come: p2 ends 1,500 over, p1 stays at 2,000.
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 2_500)
                .pid(pid("p1", "a", 1_000, 3_000))
                .pid(pid("p2", "a", 1_000, 0))
                .build());

        assertThat(byId(report).get("p1").projectedUsed()).isEqualTo(3_000);
        assertThat(byId(report).get("p2").projectedUsed()).isEqualTo(2_500);
        assertThat(byId(report).get("p1").projectedOverageCost()).isEqualByComparingTo(TARIFF.costOf(2_000));
        assertThat(byId(report).get("p2").projectedOverageCost()).isEqualByComparingTo(TARIFF.costOf(1_500));
        assertThat(report.module(key("a")).orElseThrow().projectedOverageCost())
                .isEqualByComparingTo(TARIFF.costOf(2_000).add(TARIFF.costOf(1_500)));
    }

    @Test
    void anUnevenRemainderGoesToTheFirstPidsInSnapshotOrder() {
        // 3 PIDs at quota, 7 commands to come: 3, 2, 2.
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 7)
                .pid(pid("p1", "a", 100, 100))
                .pid(pid("p2", "a", 100, 100))
                .pid(pid("p3", "a", 100, 100))
                .build());

        assertThat(report.pids()).extracting(PidProjection::projectedUsed).containsExactly(103L, 102L, 102L);
        assertThat(report.module(key("a")).orElseThrow().projectedOverage()).isEqualTo(7);
    }

    @Test
    void pidsInCooldownOrDisabledGetNoDemandButKeepTheirOverage() {
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 3_000)
                .pid(pid("active", "a", 10_000, 0))
                .pid(pid("cool", "a", 1_000, 1_500, PidAvailability.COOLDOWN))
                .pid(pid("off", "a", 50_000, 0, PidAvailability.DISABLED))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.pids()).isEqualTo(3);
        assertThat(a.activePids()).isEqualTo(1);
        assertThat(a.remaining()).isEqualTo(10_000);
        assertThat(a.futureDemand()).isEqualTo(3_000);
        assertThat(byId(report).get("active").projectedUsed()).isEqualTo(3_000);
        assertThat(byId(report).get("cool").projectedUsed()).isEqualTo(1_500);
        assertThat(byId(report).get("off").projectedUsed()).isZero();
        assertThat(a.projectedOverage()).isEqualTo(500);
        assertThat(a.projectedOverageCost()).isEqualByComparingTo("5");
    }

    @Test
    void demandWithNoActivePidIsPricedAsOneAccountWithNothingLeft() {
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 1_500)
                .pid(pid("off", "a", 50_000, 0, PidAvailability.DISABLED))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.unplacedDemand()).isEqualTo(1_500);
        assertThat(a.projectedOverage()).isEqualTo(1_500);
        assertThat(a.projectedOverageCost()).isEqualByComparingTo("20"); // 10 + 500 * 0.02
        assertThat(a.projectedRefused()).isEqualTo(1_500);
    }

    @Test
    void refusedDemandIsWhatTheHardLimitsOfActivePidsCannotTake() {
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 5_000)
                .pid(new PidUsage("p1", key("a"), 1_000, 500, 0, PidAvailability.ACTIVE))
                .pid(new PidUsage("p2", key("a"), 1_000, 0, 200, PidAvailability.ACTIVE))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.headroom()).isEqualTo(1_500 + 800);
        assertThat(a.projectedRefused()).isEqualTo(5_000 - 2_300);
        PidProjection p2 = byId(report).get("p2");
        assertThat(p2.projectedBeyondLimit()).isEqualTo(p2.projectedUsed() - 1_000);
    }

    @Test
    void demandModelsCombineObservedAndConfiguredDemand() {
        // observed: 10,000 in half a month -> 10,000 more; configured: 30,000 a month -> 15,000 more.
        Snap snap = new Snap().module(config("a", 1, 30_000, 0), 1, 10_000).module(config("b", 1, 0, 0), 1, 10_000);

        UsageReport observed = OBSERVED.project(snap.build());
        UsageReport configured = new UsageProjector(DemandModel.CONFIGURED).project(snap.build());
        UsageReport blended = UsageProjector.blended().project(snap.build());

        assertThat(observed.module(key("a")).orElseThrow().futureDemand()).isEqualTo(10_000);
        assertThat(configured.module(key("a")).orElseThrow().futureDemand()).isEqualTo(15_000);
        assertThat(blended.module(key("a")).orElseThrow().futureDemand()).isEqualTo(12_500);
        // no configured demand: every model uses the observation
        assertThat(configured.module(key("b")).orElseThrow().futureDemand()).isEqualTo(10_000);
        assertThat(blended.module(key("b")).orElseThrow().futureDemand()).isEqualTo(10_000);
    }

    @Test
    void blendedTrustsTheConfigurationOnTheFirstAndTheObservationNearTheEnd() {
        Snap start = new Snap().at(Instant.parse("2026-11-01T00:00:00Z")).module(config("a", 1, 30_000, 0), 1, 0);
        Snap late = new Snap().at(Instant.parse("2026-11-30T00:00:00Z")).module(config("a", 1, 30_000, 0), 1, 290_000);

        assertThat(UsageProjector.blended()
                        .project(start.build())
                        .module(key("a"))
                        .orElseThrow()
                        .futureDemand())
                .isEqualTo(30_000);
        // observed: 10,000 a day for the last day; configured: 1,000; weight 29/30 on the observation.
        assertThat(UsageProjector.blended()
                        .project(late.build())
                        .module(key("a"))
                        .orElseThrow()
                        .futureDemand())
                .isEqualTo((29 * 10_000 + 1_000 + 29) / 30);
    }

    @Test
    void withoutTheModulesOwnUsageTheSumOverItsPidsIsUsedAndFlagged() {
        UsageReport report = OBSERVED.project(new Snap()
                .module(ModuleUsage.estimated(config("a", 1, 0, 0), 1))
                .pid(pid("p1", "a", 10_000, 1_000))
                .pid(pid("p2", "a", 10_000, 2_000))
                .build());

        ModuleProjection a = report.module(key("a")).orElseThrow();
        assertThat(a.usageEstimated()).isTrue();
        assertThat(a.usedThisMonth()).isEqualTo(3_000);
        assertThat(a.futureDemand()).isEqualTo(3_000);
    }

    @Test
    void aPidWithQuotaZeroIsFullyUtilisedOnceUsed() {
        UsageReport report = OBSERVED.project(new Snap()
                .module("a", 0)
                .pid(pid("zero", "a", 0, 0))
                .pid(pid("used", "a", 0, 5))
                .build());

        assertThat(byId(report).get("zero").utilisation()).isZero();
        assertThat(byId(report).get("used").utilisation()).isInfinite();
    }

    @Test
    void modulesComeInKeyOrderAndPidsInSnapshotOrder() {
        UsageReport report = OBSERVED.project(new Snap()
                .module("b", 0)
                .module("a", 0)
                .pid(pid("z", "b", 1, 0))
                .pid(pid("y", "a", 1, 0))
                .build());

        assertThat(report.modules()).extracting(ModuleProjection::key).containsExactly(key("a"), key("b"));
        assertThat(report.pids()).extracting(PidProjection::id).containsExactly("z", "y");
    }

    @Test
    void badSnapshotsAreRejectedWithTheField() {
        assertThatThrownBy(
                        () -> new Snap().module("a", 0).pid(pid("p", "b", 1, 0)).build())
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.field()).isEqualTo("pids.module");
                });
        assertThatThrownBy(() -> new Snap()
                        .module("a", 0)
                        .pid(pid("p", "a", 1, 0))
                        .pid(pid("p", "a", 1, 0))
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("pids"));
        assertThatThrownBy(() -> new Snap().module("a", 0).module("a", 0).build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("modules"));
        assertThatThrownBy(() -> pid("p", "a", 1, -1))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("pids.used"));
        assertThatThrownBy(() -> ModuleUsage.of(config("a", 1, 0, 0), -1, 0))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("modules.liveInstances"));
        assertThatThrownBy(() -> ModuleUsage.of(config("a", 1, 0, 0), 1, -5))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("modules.usedThisMonth"));
        assertThatThrownBy(() -> new UsageSnapshot(null, UTC, TARIFF, List.of(), List.of()))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("at"));
    }

    @Test
    void theMinimumCountsMinPerInstanceTimesTheLargerOfLiveAndConfiguredInstancesAndAtLeastOneEach() {
        assertThat(ModuleUsage.of(config("a", 2, 0, 3), 5, 0).minActivePids()).isEqualTo(15);
        assertThat(ModuleUsage.of(config("a", 4, 0, 3), 1, 0).minActivePids()).isEqualTo(12);
        assertThat(ModuleUsage.of(config("a", 3, 0, 0), 0, 0).minActivePids()).isEqualTo(3);
    }

    @Test
    void costsAreExactDecimals() {
        UsageReport report = OBSERVED.project(new Snap()
                .tariff(io.pidpool.core.quota.OverageTariff.of(
                        io.pidpool.core.quota.OverageTariff.Tier.unbounded("0.0035")))
                .module("a", 3)
                .pid(pid("p1", "a", 0, 0))
                .build());

        assertThat(report.totalProjectedOverageCost()).isEqualTo(new BigDecimal("0.0105"));
    }
}
