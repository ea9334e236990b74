package io.pidpool.core.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.OverageTariff.Tier;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.statistics.Statistics;

/**
 * The recommender's promises on random clusters (2..5 modules, 0..10 PIDs each, random quotas, usage,
 * statuses, minimums, demand models and tariffs, tiers in any price order). "Applying" a
 * recommendation here means what the server does: MIGRATE the PIDs (their module changes in the
 * snapshot) and project again from scratch, which checks the recommender's incremental pricing
 * against an independent computation.
 */
class RecommenderProperties {
    static final Instant MONTH_START = Instant.parse("2026-11-01T00:00:00Z");

    /** One random case: a snapshot, how to project it, the policy and the frozen modules. */
    record Case(UsageSnapshot snapshot, UsageProjector projector, RecommenderPolicy policy, Set<ModuleKey> frozen) {
        UsageReport report() {
            return projector.project(snapshot);
        }

        Recommendations recommend() {
            return new Recommender(policy).recommend(report(), frozen);
        }

        BigDecimal costOf(UsageSnapshot s) {
            return projector.project(s).totalProjectedOverageCost();
        }
    }

    static Case randomCase(long seed) {
        Random r = new Random(seed);
        List<Tier> tiers = new ArrayList<>();
        int bounded = r.nextInt(3);
        for (int i = 0; i < bounded; i++) {
            tiers.add(new Tier(1 + r.nextInt(3_000), price(r)));
        }
        tiers.add(new Tier(Tier.UNBOUNDED, price(r)));
        OverageTariff tariff = OverageTariff.of(tiers);

        int moduleCount = 2 + r.nextInt(4);
        long monthMinutes = 30 * 24 * 60;
        long elapsedMinutes = r.nextInt((int) monthMinutes);
        Instant at = MONTH_START.plus(Duration.ofMinutes(elapsedMinutes));
        List<ModuleUsage> modules = new ArrayList<>();
        List<PidUsage> pids = new ArrayList<>();
        Set<ModuleKey> frozen = new HashSet<>();
        for (int m = 0; m < moduleCount; m++) {
            ModuleKey key = ModuleKey.parse("d#m" + m + "#s");
            long moduleQuota = 0;
            int count = r.nextInt(11);
            for (int i = 0; i < count; i++) {
                long quota =
                        switch (r.nextInt(5)) {
                            case 0 -> 0;
                            case 1 -> 1_000;
                            case 2 -> 5_000;
                            case 3 -> 10_000;
                            default -> r.nextInt(20_000);
                        };
                long used = r.nextInt((int) (quota * 3 / 2) + 100);
                int s = r.nextInt(10);
                PidAvailability status =
                        s < 8 ? PidAvailability.ACTIVE : s == 8 ? PidAvailability.COOLDOWN : PidAvailability.DISABLED;
                pids.add(new PidUsage("p" + m + "-" + i, key, quota, r.nextInt(3_000), used, status));
                moduleQuota += quota;
            }
            // Usage so far between none and twice the pace that would use the module's quota up, so
            // that some modules run short and others have slack.
            long pace = moduleQuota * elapsedMinutes / monthMinutes;
            long usedThisMonth = (long) (r.nextDouble() * 2 * pace) + r.nextInt(2_000);
            long monthlyDemand = r.nextBoolean() ? 0 : (long) (r.nextDouble() * 2 * moduleQuota);
            ModuleConfig config = new ModuleConfig(key, 1 + r.nextInt(2), monthlyDemand, r.nextInt(3) / 2, Map.of());
            modules.add(ModuleUsage.of(config, r.nextInt(4), usedThisMonth));
            if (r.nextInt(10) == 0) {
                frozen.add(key);
            }
        }
        UsageSnapshot snapshot = new UsageSnapshot(at, Fixtures.UTC, tariff, modules, pids);
        UsageProjector projector = new UsageProjector(DemandModel.values()[r.nextInt(DemandModel.values().length)]);
        RecommenderPolicy policy = new RecommenderPolicy(
                1 + r.nextInt(15),
                r.nextInt(3) == 0 ? new BigDecimal(r.nextInt(500)).movePointLeft(2) : BigDecimal.ZERO,
                1 + r.nextInt(5));
        return new Case(snapshot, projector, policy, frozen);
    }

    private static BigDecimal price(Random r) {
        return new BigDecimal(r.nextInt(300)).movePointLeft(2);
    }

    /** The snapshot with these PIDs migrated to {@code to}. */
    static UsageSnapshot migrate(UsageSnapshot s, List<String> ids, ModuleKey to) {
        Set<String> moving = new HashSet<>(ids);
        List<PidUsage> pids = new ArrayList<>(s.pids().size());
        for (PidUsage pid : s.pids()) {
            pids.add(moving.contains(pid.id()) ? pid.withModule(to) : pid);
        }
        return new UsageSnapshot(s.at(), s.window(), s.tariff(), s.modules(), pids);
    }

    static Map<ModuleKey, Integer> activeCounts(UsageSnapshot s) {
        Map<ModuleKey, Integer> counts = new HashMap<>();
        s.modules().forEach(m -> counts.put(m.key(), 0));
        for (PidUsage pid : s.pids()) {
            if (pid.status() == PidAvailability.ACTIVE) {
                counts.merge(pid.module(), 1, Integer::sum);
            }
        }
        return counts;
    }

    static void assertMinimumsOfSources(UsageSnapshot s, Set<ModuleKey> sources) {
        Map<ModuleKey, Integer> counts = activeCounts(s);
        for (ModuleUsage module : s.modules()) {
            if (sources.contains(module.key())) {
                assertThat(counts.get(module.key()))
                        .as("ACTIVE PIDs left in %s", module.key())
                        .isGreaterThanOrEqualTo(module.minActivePids());
            }
        }
    }

    @Property(tries = 1000)
    void appliedInOrderEveryMoveAndEveryRecommendationStrictlyLowersTheProjectedCost(@ForAll long seed) {
        Case c = randomCase(seed);
        Recommendations result = c.recommend();
        Statistics.label("recommendations")
                .collect(result.isEmpty() ? "none" : result.recommendations().size() == 1 ? "one" : "several");
        Statistics.label("recommendations")
                .coverage(check -> check.check("none").percentage(p -> p < 85));
        checkInOrder(c, result);
    }

    static void checkInOrder(Case c, Recommendations result) {
        UsageSnapshot state = c.snapshot();
        BigDecimal cost = c.costOf(state);
        assertThat(result.costBefore()).isEqualByComparingTo(cost);
        for (Recommendation r : result.recommendations()) {
            assertThat(r.totalCostBefore()).isEqualByComparingTo(cost);
            assertThat(r.delta().signum()).isNegative();
            for (String id : r.pidIds()) {
                state = migrate(state, List.of(id), r.target().module());
                BigDecimal next = c.costOf(state);
                assertThat(next.subtract(cost)
                                .add(c.policy().minSavingPerMove())
                                .signum())
                        .as("move of %s in %s saves more than the minimum", id, r)
                        .isNegative();
                cost = next;
            }
            assertThat(cost).isEqualByComparingTo(r.totalCostAfter());
            UsageReport after = c.projector().project(state);
            assertThat(after.module(r.source().module()).orElseThrow().projectedOverageCost())
                    .isEqualByComparingTo(r.source().costAfter());
            assertThat(after.module(r.target().module()).orElseThrow().projectedOverageCost())
                    .isEqualByComparingTo(r.target().costAfter());
        }
        assertThat(cost).isEqualByComparingTo(result.costAfter());
        assertThat(result.costAfter()).isLessThanOrEqualTo(result.costBefore());
    }

    @Property(tries = 1000)
    void appliedAloneEveryRecommendationStrictlyLowersTheProjectedCost(@ForAll long seed) {
        Case c = randomCase(seed);
        checkAlone(c, c.recommend());
    }

    static void checkAlone(Case c, Recommendations result) {
        BigDecimal before = c.costOf(c.snapshot());
        for (Recommendation r : result.recommendations()) {
            BigDecimal alone =
                    c.costOf(migrate(c.snapshot(), r.pidIds(), r.target().module()));
            assertThat(alone).isEqualByComparingTo(before.add(r.standaloneDelta()));
            assertThat(alone).isLessThan(before);
        }
    }

    @Property(tries = 1000)
    void moduleMinimumsAreRespectedInOrderAndAlone(@ForAll long seed) {
        Case c = randomCase(seed);
        checkMinimums(c, c.recommend());
    }

    static void checkMinimums(Case c, Recommendations result) {
        UsageSnapshot state = c.snapshot();
        Set<ModuleKey> sources = new HashSet<>();
        for (Recommendation r : result.recommendations()) {
            sources.add(r.source().module());
            state = migrate(state, r.pidIds(), r.target().module());
            assertMinimumsOfSources(state, sources);
            assertThat(activeCounts(state).get(r.source().module()))
                    .isEqualTo(r.source().activePidsAfter());
            assertMinimumsOfSources(
                    migrate(c.snapshot(), r.pidIds(), r.target().module()),
                    Set.of(r.source().module()));
        }
    }

    @Property(tries = 1000)
    void onlyActivePidsOfTheSourceMoveEachAtMostOnceWithinTheLimitAndNoneOfAFrozenModule(@ForAll long seed) {
        Case c = randomCase(seed);
        checkPids(c, c.recommend());
    }

    static void checkPids(Case c, Recommendations result) {
        Set<ModuleKey> givers = new HashSet<>();
        Set<ModuleKey> takers = new HashSet<>();
        Map<String, PidUsage> byId = new HashMap<>();
        c.snapshot().pids().forEach(p -> byId.put(p.id(), p));
        Set<String> seen = new HashSet<>();
        for (Recommendation r : result.recommendations()) {
            assertThat(r.source().module()).isNotEqualTo(r.target().module());
            assertThat(c.frozen())
                    .doesNotContain(r.source().module(), r.target().module());
            givers.add(r.source().module());
            takers.add(r.target().module());
            for (String id : r.pidIds()) {
                assertThat(seen.add(id)).as("%s recommended twice", id).isTrue();
                assertThat(byId.get(id).status()).isEqualTo(PidAvailability.ACTIVE);
                assertThat(byId.get(id).module()).isEqualTo(r.source().module());
            }
        }
        givers.retainAll(takers);
        assertThat(givers).as("modules that give and take").isEmpty();
        assertThat(result.moves()).isLessThanOrEqualTo(c.policy().maxMoves());
        assertThat(result.toOperations()).hasSize(result.recommendations().size());
    }

    /**
     * Seeds (of this generator) where applying the recommendations grouped by pair of modules would
     * let some move raise the cost, so the recommender falls back to its greedy order (found by
     * searching 200,000 seeds: 18 such cases). Then the same pair of modules can appear twice. If the
     * generator changes, these seeds stop meaning anything and the first assertion says so.
     */
    @Example
    void casesWhereTheGreedyOrderIsKeptStillKeepEveryPromise() {
        boolean repeatedPair = false;
        for (long seed : new long[] {7956, 13017, 23618, 25528}) {
            Case c = randomCase(seed);
            Recommendations result = c.recommend();
            Set<String> pairs = new HashSet<>();
            for (Recommendation r : result.recommendations()) {
                repeatedPair |=
                        !pairs.add(r.source().module() + ">" + r.target().module());
            }
            checkInOrder(c, result);
            checkAlone(c, result);
            checkMinimums(c, result);
            checkPids(c, result);
        }
        assertThat(repeatedPair)
                .as("the seeds still exercise the greedy-order fallback")
                .isTrue();
    }

    @Property(tries = 1000)
    void recommendationsAreDeterministicWhateverTheInputOrder(@ForAll long seed) {
        Case c = randomCase(seed);
        Recommendations first = c.recommend();

        List<ModuleUsage> modules = new ArrayList<>(c.snapshot().modules());
        List<PidUsage> pids = new ArrayList<>(c.snapshot().pids());
        Random r = new Random(seed ^ 0x5DEECE66DL);
        Collections.shuffle(modules, r);
        Collections.shuffle(pids, r);
        UsageSnapshot shuffled = new UsageSnapshot(
                c.snapshot().at(), c.snapshot().window(), c.snapshot().tariff(), modules, pids);

        assertThat(c.recommend()).isEqualTo(first);
        assertThat(new Recommender(c.policy()).recommend(c.projector().project(shuffled), c.frozen()))
                .isEqualTo(first);
    }
}
