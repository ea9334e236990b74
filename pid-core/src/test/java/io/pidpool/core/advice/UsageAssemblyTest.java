package io.pidpool.core.advice;

import static io.pidpool.core.advice.Fixtures.MID_MONTH;
import static io.pidpool.core.advice.Fixtures.TARIFF;
import static io.pidpool.core.advice.Fixtures.UTC;
import static io.pidpool.core.advice.Fixtures.config;
import static io.pidpool.core.advice.Fixtures.key;
import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UsageAssemblyTest {
    @Test
    void joinsDatabaseFactsWithRedisCountersAndProjects() {
        ManualClock clock = new ManualClock(MID_MONTH);
        List<ModuleFacts> modules = List.of(new ModuleFacts(config("a", 2, 0, 0), 2));
        List<PidFacts> pids = List.of(
                new PidFacts("p1", key("a"), PidAvailability.ACTIVE, 600, 100),
                new PidFacts("p2", key("b"), PidAvailability.DISABLED, 50, 0), // module without configuration
                new PidFacts("p3", key("a"), PidAvailability.ACTIVE, 400, 0)); // no counter in Redis
        Map<String, Long> used = new HashMap<>(Map.of("p1", 500L, "p2", 80L, "gone", 7L));

        UsageAssembly assembly = UsageAssembly.assemble(clock.instant(), UTC, TARIFF, modules, pids, used);

        assertThat(assembly.withoutCounter()).isEqualTo(1);
        assertThat(assembly.unknownPids()).containsExactly("gone");
        assertThat(assembly.clamped()).isEmpty();
        assertThat(assembly.snapshot().modules()).extracting(ModuleUsage::key).containsExactly(key("a"), key("b"));
        assertThat(assembly.snapshot().modulesByKey().get(key("b")).config().servers())
                .isEqualTo(1);
        assertThat(assembly.snapshot().pids())
                .extracting(PidUsage::id, PidUsage::used)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("p1", 500L),
                        org.assertj.core.groups.Tuple.tuple("p2", 80L),
                        org.assertj.core.groups.Tuple.tuple("p3", 0L));

        UsageReport report = UsageProjector.blended().project(assembly.snapshot());
        ModuleProjection a = report.module(key("a")).orElseThrow();
        // half of the month gone, 500 used: another 500 to come, poured into p3's 400 left and p1's 100
        assertThat(a.used()).isEqualTo(500);
        assertThat(a.remaining()).isEqualTo(500);
        assertThat(a.futureDemand()).isEqualTo(500);
        assertThat(a.projectedOverage()).isZero();
        ModuleProjection b = report.module(key("b")).orElseThrow();
        // DISABLED p2 keeps its 30 over quota; the module's 80 more to come have no ACTIVE PID, so
        // they are priced as overage too: 110 × 0.01
        assertThat(b.unplacedDemand()).isEqualTo(80);
        assertThat(b.projectedOverage()).isEqualTo(110);
        assertThat(b.projectedOverageCost()).isEqualByComparingTo("1.10");
        assertThat(report.at()).isEqualTo(MID_MONTH);
    }

    @Test
    void corruptCountersAreClampedInsteadOfFailingTheScan() {
        List<PidFacts> pids = List.of(
                new PidFacts("p1", key("a"), PidAvailability.ACTIVE, 10, 0),
                new PidFacts("p2", key("a"), PidAvailability.ACTIVE, 10, 0));
        UsageAssembly assembly = UsageAssembly.assemble(
                MID_MONTH, UTC, TARIFF, List.of(), pids, Map.of("p1", -5L, "p2", Long.MAX_VALUE));
        assertThat(assembly.clamped()).containsExactlyInAnyOrder("p1", "p2");
        assertThat(assembly.snapshot().pids()).extracting(PidUsage::used).containsExactly(0L, PidUsage.MAX_USED);
    }

    @Test
    void latestReportKeepsTheNewestAndAgesWithTheClock() {
        ManualClock clock = new ManualClock(MID_MONTH);
        LatestReport latest = new LatestReport(clock);
        assertThat(latest.latest()).isEmpty();
        assertThat(latest.fresh(Duration.ofDays(1))).isEmpty();

        UsageReport first = reportAt(clock);
        clock.advance(Duration.ofSeconds(10));
        UsageReport second = reportAt(clock);
        assertThat(latest.publish(second)).isTrue();
        assertThat(latest.publish(first)).as("an older scan finishing late").isFalse();
        assertThat(latest.latest()).containsSame(second);

        clock.advance(Duration.ofSeconds(30));
        assertThat(latest.fresh(Duration.ofSeconds(30))).containsSame(second);
        clock.advance(Duration.ofMillis(1));
        assertThat(latest.fresh(Duration.ofSeconds(30))).isEmpty();
        assertThat(latest.latest()).containsSame(second);
        assertThat(latest.age(second)).isEqualTo(Duration.ofMillis(30_001));
    }

    private static UsageReport reportAt(ManualClock clock) {
        return UsageProjector.blended()
                .project(UsageAssembly.assemble(
                                clock.instant(),
                                UTC,
                                TARIFF,
                                List.of(),
                                List.of(new PidFacts("p1", key("a"), PidAvailability.ACTIVE, 10, 0)),
                                Map.of("p1", 1L))
                        .snapshot());
    }

    @Test
    void modulesWhosePidsStayedPutGetTheirRealUsageTheOthersStayEstimated() {
        ManualClock clock = new ManualClock(MID_MONTH);
        List<ModuleFacts> modules =
                List.of(new ModuleFacts(config("a", 1, 0, 0), 1), new ModuleFacts(config("b", 1, 0, 0), 1));
        List<PidFacts> pids = List.of(
                new PidFacts("p1", key("a"), PidAvailability.ACTIVE, 600, 0),
                new PidFacts("p2", key("a"), PidAvailability.ACTIVE, 400, 0),
                new PidFacts("p3", key("b"), PidAvailability.ACTIVE, 400, 0));
        Map<String, Long> used = Map.of("p1", 500L, "p2", 20L, "p3", 30L);

        UsageAssembly assembly =
                UsageAssembly.assemble(clock.instant(), UTC, TARIFF, modules, pids, used, k -> k.equals(key("a")));

        ModuleUsage a = assembly.snapshot().modulesByKey().get(key("a"));
        ModuleUsage b = assembly.snapshot().modulesByKey().get(key("b"));
        assertThat(a.usedThisMonth()).hasValue(520);
        assertThat(b.usedThisMonth()).isEmpty();
        UsageReport report = UsageProjector.blended().project(assembly.snapshot());
        assertThat(report.module(key("a")).orElseThrow().usageEstimated()).isFalse();
        assertThat(report.module(key("b")).orElseThrow().usageEstimated()).isTrue();
        // the old overload knows nothing about moves: everything estimated, as before
        UsageReport old = UsageProjector.blended()
                .project(UsageAssembly.assemble(clock.instant(), UTC, TARIFF, modules, pids, used)
                        .snapshot());
        assertThat(old.modules()).allSatisfy(m -> assertThat(m.usageEstimated()).isTrue());
    }
}
