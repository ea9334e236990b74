package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Operation;
import java.math.BigDecimal;

/**
 * Bounds of one {@link Recommender} run.
 *
 * @param maxMoves the most PIDs one run recommends moving, {@code 1..}{@link Operation#MAX_PIDS}
 * @param minSavingPerMove a move must lower the projected cost by more than this ({@code >= 0}); a
 *     small positive value keeps the advice from chasing rounding-size savings and from flapping
 *     between runs as projections wobble
 * @param maxModulesPerSide each step weighs at most this many source modules (largest slack first)
 *     against this many target modules (largest shortfall first), {@code >= 1}; bounds a step's
 *     work at {@code 3 * maxModulesPerSide^2} what-if costs however many modules there are
 */
public record RecommenderPolicy(int maxMoves, BigDecimal minSavingPerMove, int maxModulesPerSide) {
    public RecommenderPolicy {
        requireArgument(
                maxMoves >= 1 && maxMoves <= Operation.MAX_PIDS,
                "maxMoves",
                "maxMoves must be within 1..%d, was %d",
                Operation.MAX_PIDS,
                maxMoves);
        requireNonNull(minSavingPerMove, "minSavingPerMove");
        requireArgument(
                minSavingPerMove.signum() >= 0,
                "minSavingPerMove",
                "minSavingPerMove must be >= 0, was %s",
                minSavingPerMove);
        requireArgument(
                maxModulesPerSide >= 1,
                "maxModulesPerSide",
                "maxModulesPerSide must be >= 1, was %d",
                maxModulesPerSide);
    }

    /** At most 100 moves per run, any strictly positive saving, 64 modules per side. */
    public static RecommenderPolicy defaults() {
        return new RecommenderPolicy(100, BigDecimal.ZERO, 64);
    }

    public RecommenderPolicy withMaxMoves(int moves) {
        return new RecommenderPolicy(moves, minSavingPerMove, maxModulesPerSide);
    }

    public RecommenderPolicy withMinSavingPerMove(BigDecimal saving) {
        return new RecommenderPolicy(maxMoves, saving, maxModulesPerSide);
    }

    public RecommenderPolicy withMaxModulesPerSide(int modules) {
        return new RecommenderPolicy(maxMoves, minSavingPerMove, modules);
    }
}
