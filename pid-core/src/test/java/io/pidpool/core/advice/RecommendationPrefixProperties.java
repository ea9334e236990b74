package io.pidpool.core.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.Operation;
import java.math.BigDecimal;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * What a throttled automatic application submits ({@link Recommendations#firstMoves}): for any
 * budget, the first moves in order, and applying them (MIGRATE, then projecting again from scratch)
 * never raises the projected cost; the cost after them is the in-order cost after that many moves.
 */
class RecommendationPrefixProperties {
    @Property(tries = 1000)
    void applyingTheFirstMovesOfAnyBudgetNeverRaisesTheProjectedCost(@ForAll long seed) {
        RecommenderProperties.Case c = RecommenderProperties.randomCase(seed);
        Recommendations result = c.recommend();
        int budget = new Random(seed ^ 0x5DEECE66DL).nextInt(result.moves() + 2);
        List<Operation.Migrate<String>> operations = result.firstMoves(budget);

        int moved = operations.stream().mapToInt(op -> op.pidIds().size()).sum();
        assertThat(moved).isEqualTo(Math.min(budget, result.moves()));
        UsageSnapshot state = c.snapshot();
        BigDecimal before = c.costOf(state);
        for (Operation.Migrate<String> op : operations) {
            state = RecommenderProperties.migrate(state, op.pidIds(), op.to());
        }
        BigDecimal after = c.costOf(state);
        assertThat(after).isLessThanOrEqualTo(before);
        if (moved > 0) {
            assertThat(after).isLessThan(before);
        }

        // the same PIDs in the same order as the full run's moves
        List<String> all = result.recommendations().stream()
                .flatMap(r -> r.pidIds().stream())
                .toList();
        assertThat(operations.stream().flatMap(op -> op.pidIds().stream()).toList())
                .isEqualTo(all.subList(0, moved));
    }
}
