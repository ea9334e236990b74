package io.pidpool.core.advice;

import static io.pidpool.core.advice.Fixtures.config;
import static io.pidpool.core.advice.Fixtures.key;
import static io.pidpool.core.advice.Fixtures.pid;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.advice.Fixtures.Snap;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RecommenderTest {
    static final UsageProjector PROJECTOR = new UsageProjector(DemandModel.OBSERVED);
    static final Recommender RECOMMENDER = new Recommender(RecommenderPolicy.defaults());

    /**
     * "slack": 4 PIDs with 10,000 left each, 2,000 more to come (38,000 slack). "short": one PID at
     * quota with 10,000 more to come: 10,000 over, costing 10 + 9,000 * 0.02 = 190.
     */
    static Snap slackAndShort() {
        return new Snap()
                .module("slack", 2_000)
                .pids("slack", "slack", 4, 10_000, 0)
                .module("short", 10_000)
                .pid(pid("short-0", "short", 10_000, 10_000));
    }

    @Test
    void movesAPidWithQuotaLeftFromTheModuleWithSlackToTheShortOne() {
        UsageReport report = PROJECTOR.project(slackAndShort().build());
        assertThat(report.totalProjectedOverageCost()).isEqualByComparingTo("190");

        Recommendations result = RECOMMENDER.recommend(report);

        assertThat(result.recommendations()).hasSize(1);
        Recommendation r = result.recommendations().get(0);
        assertThat(r.pidIds()).containsExactly("slack-0");
        assertThat(r.source().module()).isEqualTo(key("slack"));
        assertThat(r.target().module()).isEqualTo(key("short"));
        assertThat(r.source().slackBefore()).isEqualTo(38_000);
        assertThat(r.source().slackAfter()).isEqualTo(28_000);
        assertThat(r.target().shortfallBefore()).isEqualTo(10_000);
        assertThat(r.target().shortfallAfter()).isZero();
        assertThat(r.movedRemaining()).isEqualTo(10_000);
        assertThat(r.totalCostBefore()).isEqualByComparingTo("190");
        assertThat(r.totalCostAfter()).isEqualByComparingTo("0");
        assertThat(r.delta()).isEqualByComparingTo("-190");
        assertThat(r.standaloneDelta()).isEqualByComparingTo("-190");
        assertThat(r.target().costDelta()).isEqualByComparingTo("-190");
        assertThat(result.costBefore()).isEqualByComparingTo("190");
        assertThat(result.costAfter()).isEqualByComparingTo("0");
        assertThat(result.saving()).isEqualByComparingTo("190");
        assertThat(result.moveLimitReached()).isFalse();
    }

    @Test
    void explainsWhichModuleIsShortWhichHasSlackAndTheCostDelta() {
        Recommendation r = RECOMMENDER
                .recommend(PROJECTOR.project(slackAndShort().build()))
                .recommendations()
                .get(0);

        assertThat(r.explanation())
                .contains("Move 1 PID (slack-0) from dept#slack#sys to dept#short#sys")
                .contains("dept#slack#sys has slack: 38000 commands of quota projected to stay unused")
                .contains("dept#short#sys is short: its projected demand of 10000 commands exceeds its remaining"
                        + " quota by 10000 (0 after the move)")
                .contains("carry 10000 commands of unused quota")
                .contains("Projected overage cost 190.00 -> 0.00 (-190.00)");
    }

    @Test
    void convertsToMigrateOperations() {
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module("slack", 0)
                .pids("slack", "slack", 5, 10_000, 0)
                .module("short", 25_000)
                .pid(pid("short-0", "short", 1_000, 1_000))
                .build()));

        assertThat(result.recommendations()).hasSize(1);
        assertThat(result.recommendations().get(0).pidIds()).containsExactly("slack-0", "slack-1", "slack-2");
        assertThat(result.toOperations())
                .containsExactly(new Operation.Migrate<>(List.of("slack-0", "slack-1", "slack-2"), key("short")));
        assertThat(result.toOperations(2))
                .containsExactly(
                        new Operation.Migrate<>(List.of("slack-0", "slack-1"), key("short")),
                        new Operation.Migrate<>(List.of("slack-2"), key("short")));
        assertThat(result.moves()).isEqualTo(3);
        assertThatThrownBy(() -> result.toOperations(0)).isInstanceOf(PidPoolException.class);
    }

    @Test
    void givesThePidThatFitsTheSlackRatherThanTheBiggestOne() {
        // source: 24,000 left, 19,000 to come (slack 5,000); target: 4,000 short.
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module("src", 19_000)
                .pid(pid("big", "src", 20_000, 0))
                .pid(pid("small", "src", 4_000, 0))
                .module("dst", 4_000)
                .pid(pid("dst-0", "dst", 1_000, 1_000))
                .build()));

        assertThat(result.recommendations()).hasSize(1);
        assertThat(result.recommendations().get(0).pidIds()).containsExactly("small");
        assertThat(result.costAfter()).isEqualByComparingTo("0");
    }

    @Test
    void neverTakesAModuleBelowItsMinimum() {
        // minPerInstance 2 with 2 live instances: at least 4 of its 5 PIDs stay.
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module(config("slack", 1, 0, 2), 2, 0)
                .pids("slack", "slack", 5, 10_000, 0)
                .module("short", 100_000)
                .pid(pid("short-0", "short", 1_000, 1_000))
                .build()));

        assertThat(result.moves()).isEqualTo(1);
        assertThat(result.recommendations().get(0).source().activePidsAfter()).isEqualTo(4);
    }

    @Test
    void aMinimumOfZeroStillKeepsOnePidPerConfiguredServer() {
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module(config("slack", 3, 0, 0), 1, 0)
                .pids("slack", "slack", 5, 10_000, 0)
                .module("short", 100_000)
                .pid(pid("short-0", "short", 1_000, 1_000))
                .build()));

        assertThat(result.moves()).isEqualTo(2);
    }

    @Test
    void neverMovesPidsInCooldownOrDisabled() {
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module("slack", 0)
                .pid(pid("cool", "slack", 50_000, 0, PidAvailability.COOLDOWN))
                .pid(pid("off", "slack", 50_000, 0, PidAvailability.DISABLED))
                .pids("slack", "slack", 3, 1_000, 0)
                .module("short", 10_000)
                .pid(pid("short-0", "short", 1_000, 1_000))
                .build()));

        assertThat(result.recommendations()).isNotEmpty();
        assertThat(result.recommendations().stream().flatMap(r -> r.pidIds().stream()))
                .doesNotContain("cool", "off")
                .containsExactly("slack-0", "slack-1");
    }

    @Test
    void stopsAtTheMoveLimitAndSaysSo() {
        Recommendations result = new Recommender(RecommenderPolicy.defaults().withMaxMoves(3))
                .recommend(PROJECTOR.project(new Snap()
                        .module("slack", 0)
                        .pids("slack", "slack", 10, 1_000, 0)
                        .module("short", 50_000)
                        .pid(pid("short-0", "short", 1_000, 1_000))
                        .build()));

        assertThat(result.moves()).isEqualTo(3);
        assertThat(result.moveLimitReached()).isTrue();
    }

    @Test
    void frozenModulesNeitherGiveNorTake() {
        UsageReport report = PROJECTOR.project(slackAndShort().build());

        assertThat(RECOMMENDER.recommend(report, Set.of(key("short"))).isEmpty())
                .isTrue();
        assertThat(RECOMMENDER.recommend(report, Set.of(key("slack"))).isEmpty())
                .isTrue();
    }

    @Test
    void nothingToRecommendWithoutShortfallSlackOrPrice() {
        assertThat(RECOMMENDER
                        .recommend(PROJECTOR.project(new Snap()
                                .module("a", 100)
                                .pids("a", "a", 2, 10_000, 0)
                                .module("b", 100)
                                .pids("b", "b", 2, 10_000, 0)
                                .build()))
                        .isEmpty())
                .as("nobody short")
                .isTrue();
        assertThat(RECOMMENDER
                        .recommend(PROJECTOR.project(new Snap()
                                .module("a", 50_000)
                                .pids("a", "a", 2, 10_000, 0)
                                .module("b", 50_000)
                                .pids("b", "b", 2, 10_000, 0)
                                .build()))
                        .isEmpty())
                .as("nobody with slack")
                .isTrue();
        assertThat(RECOMMENDER
                        .recommend(PROJECTOR.project(
                                slackAndShort().tariff(OverageTariff.free()).build()))
                        .isEmpty())
                .as("overage is free")
                .isTrue();
    }

    @Test
    void aMoveMustSaveMoreThanTheMinimumSaving() {
        UsageReport report = PROJECTOR.project(slackAndShort().build());

        assertThat(new Recommender(RecommenderPolicy.defaults().withMinSavingPerMove(new BigDecimal("190")))
                        .recommend(report)
                        .isEmpty())
                .isTrue();
        assertThat(new Recommender(RecommenderPolicy.defaults().withMinSavingPerMove(new BigDecimal("189.99")))
                        .recommend(report)
                        .moves())
                .isEqualTo(1);
    }

    @Test
    void aModuleWithDemandButNoActivePidGetsOne() {
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module("slack", 0)
                .pids("slack", "slack", 3, 10_000, 0)
                .module("empty", 5_000)
                .build()));

        assertThat(result.moves()).isEqualTo(1);
        assertThat(result.recommendations().get(0).target().module()).isEqualTo(key("empty"));
        assertThat(result.costAfter()).isEqualByComparingTo("0");
    }

    @Test
    void eachRecommendationIsBetweenOnePairOfModules() {
        // two short modules: the greedy alternates between them (equal marginal prices), but each gets
        // one recommendation, in the order of their first move (a tie goes to the key order).
        Recommendations result = RECOMMENDER.recommend(PROJECTOR.project(new Snap()
                .module("slack", 0)
                .pids("slack", "slack", 6, 10_000, 0)
                .module("short1", 15_000)
                .pid(pid("s1", "short1", 1_000, 1_000))
                .module("short2", 25_000)
                .pid(pid("s2", "short2", 1_000, 1_000))
                .build()));

        assertThat(result.recommendations())
                .extracting(r -> r.target().module())
                .containsExactly(key("short1"), key("short2"));
        assertThat(result.recommendations()).extracting(r -> r.pidIds().size()).containsExactly(2, 3);
        assertThat(result.recommendations().get(1).totalCostBefore())
                .isEqualByComparingTo(result.recommendations().get(0).totalCostAfter());
        assertThat(result.costAfter()).isEqualByComparingTo("0");
    }

    @Test
    void policyBoundsAreChecked() {
        assertThatThrownBy(() -> RecommenderPolicy.defaults().withMaxMoves(0)).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> RecommenderPolicy.defaults().withMaxMoves(Operation.MAX_PIDS + 1))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> RecommenderPolicy.defaults().withMinSavingPerMove(new BigDecimal("-1")))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> RecommenderPolicy.defaults().withMaxModulesPerSide(0))
                .isInstanceOf(PidPoolException.class);
    }
}
