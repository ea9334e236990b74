package io.pidpool.core.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.OverageTariff.Tier;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Runs projection, recommendation and alert evaluation once at the design's target scale (100,000
 * PIDs in 50 modules) so those code paths run at that size in every build. No timing assertion: the
 * measured numbers are in {@code docs/advice.md}; timing belongs in a warmed-up run, not in a
 * shared-CPU unit test.
 */
class AdviceScaleTest {
    /**
     * {@code pids} PIDs spread over {@code modules} modules; even modules run short (usage above the
     * pace of their quota), odd ones have slack; 1 % of PIDs in cooldown, 1 % disabled.
     */
    static UsageSnapshot cluster(int pids, int modules, long seed) {
        Random r = new Random(seed);
        Instant at = Instant.parse("2026-11-20T12:00:00Z");
        double elapsed = (19.5 * 24) / (30 * 24);
        List<ModuleUsage> moduleUsages = new ArrayList<>();
        List<PidUsage> pidUsages = new ArrayList<>(pids);
        int perModule = pids / modules;
        for (int m = 0; m < modules; m++) {
            ModuleKey key = ModuleKey.parse("dept" + (m % 7) + "#mod" + m + "#sys");
            long quota = 0;
            double pace = m % 2 == 0 ? 1.1 + r.nextDouble() * 0.4 : 0.3 + r.nextDouble() * 0.5;
            for (int i = 0; i < perModule; i++) {
                long q = 5_000 + 1_000L * r.nextInt(16);
                long used = (long) (q * elapsed * pace * (0.8 + r.nextDouble() * 0.4));
                int s = r.nextInt(100);
                PidAvailability status =
                        s == 0 ? PidAvailability.COOLDOWN : s == 1 ? PidAvailability.DISABLED : PidAvailability.ACTIVE;
                pidUsages.add(new PidUsage("pid-" + m + "-" + i, key, q, q / 5, used, status));
                quota += q;
            }
            long usedThisMonth = (long) (quota * elapsed * pace);
            ModuleConfig config = new ModuleConfig(key, 10, (long) (quota * pace), 2, Map.of());
            moduleUsages.add(ModuleUsage.of(config, 8 + r.nextInt(4), usedThisMonth));
        }
        OverageTariff tariff =
                OverageTariff.of(Tier.of(1_000, "0.0100"), Tier.of(10_000, "0.0080"), Tier.unbounded("0.0060"));
        return new UsageSnapshot(at, Fixtures.UTC, tariff, moduleUsages, pidUsages);
    }

    @Test
    void projectsRecommendsAndAlertsForAHundredThousandPids() {
        UsageSnapshot snapshot = cluster(100_000, 50, 42);

        UsageReport report = UsageProjector.blended().project(snapshot);
        Recommendations recommendations = new Recommender(RecommenderPolicy.defaults()).recommend(report);
        AlertEvaluation alerts = new AlertRules(AlertPolicy.defaults())
                .evaluate(
                        report,
                        List.of(new PlanSignal.BrakeEngaged(ModuleKey.parse("dept0#mod0#sys"), 6, 10)),
                        List.of(),
                        snapshot.at());

        assertThat(report.pids()).hasSize(100_000);
        assertThat(report.modules()).hasSize(50);
        long short_ = report.modules().stream().filter(m -> m.shortfall() > 0).count();
        assertThat(short_).isBetween(1L, 49L);
        assertThat(report.totalProjectedOverageCost().signum()).isPositive();
        assertThat(recommendations.moves())
                .isBetween(1, RecommenderPolicy.defaults().maxMoves());
        assertThat(recommendations.costAfter()).isLessThan(recommendations.costBefore());
        Set<String> moved = new HashSet<>();
        recommendations.recommendations().forEach(r -> moved.addAll(r.pidIds()));
        assertThat(moved).hasSize(recommendations.moves());
        assertThat(alerts.open().stream().filter(a -> a.kind().aboutPid()))
                .hasSize(AlertPolicy.defaults().maxPidAlerts());
        assertThat(alerts.open())
                .extracting(Alert::kind)
                .contains(AlertKind.PID_ALERTS_TRUNCATED, AlertKind.BRAKE_ENGAGED);
    }
}
