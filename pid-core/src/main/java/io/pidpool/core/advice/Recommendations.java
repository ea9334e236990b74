package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Operation;
import io.pidpool.core.quota.QuotaMonth;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The outcome of one {@link Recommender} run: recommendations in the order they are meant to be
 * applied, and the projected overage cost before and after all of them.
 *
 * @param costBefore the snapshot's projected overage cost
 * @param costAfter the projected cost once every recommendation is applied; {@code <= costBefore}
 * @param moveLimitReached whether the run stopped at {@link RecommenderPolicy#maxMoves()} with moves
 *     still worth making (the next run continues)
 */
public record Recommendations(
        QuotaMonth month,
        Instant at,
        BigDecimal costBefore,
        BigDecimal costAfter,
        List<Recommendation> recommendations,
        boolean moveLimitReached) {

    public Recommendations {
        requireNonNull(month, "month");
        requireNonNull(at, "at");
        requireNonNull(costBefore, "costBefore");
        requireNonNull(costAfter, "costAfter");
        recommendations = List.copyOf(requireNonNull(recommendations, "recommendations"));
    }

    public boolean isEmpty() {
        return recommendations.isEmpty();
    }

    /** {@code costBefore - costAfter}, {@code >= 0}. */
    public BigDecimal saving() {
        return costBefore.subtract(costAfter);
    }

    /** PIDs moved over all recommendations. */
    public int moves() {
        return recommendations.stream().mapToInt(r -> r.pidIds().size()).sum();
    }

    /** One MIGRATE per recommendation, in order. */
    public List<Operation<String>> toOperations() {
        return toOperations(Operation.MAX_PIDS);
    }

    /**
     * MIGRATE operations for the first {@code maxMoves} moves only, in order: one operation per
     * recommendation reached, the last possibly cut short. What a throttled automatic application
     * submits; like every prefix of the moves, it never raises the projected cost.
     */
    public List<Operation.Migrate<String>> firstMoves(int maxMoves) {
        requireArgument(maxMoves >= 0, "maxMoves", "maxMoves must be >= 0, was %d", maxMoves);
        List<Operation.Migrate<String>> operations = new ArrayList<>();
        int left = maxMoves;
        for (Recommendation r : recommendations) {
            if (left == 0) {
                break;
            }
            List<String> ids = r.pidIds().subList(0, Math.min(left, r.pidIds().size()));
            operations.add(new Operation.Migrate<>(ids, r.target().module()));
            left -= ids.size();
        }
        return operations;
    }

    /**
     * MIGRATE operations of at most {@code maxPidsPerOperation} PIDs each, in order, for a server that
     * submits them as throttled batches. Any prefix of the returned list is a prefix of the run's
     * moves, and every such prefix lowers the projected cost: stopping part way (throttle, failure,
     * a new snapshot) never leaves the cluster worse off than before.
     */
    public List<Operation<String>> toOperations(int maxPidsPerOperation) {
        requireArgument(
                maxPidsPerOperation >= 1 && maxPidsPerOperation <= Operation.MAX_PIDS,
                "maxPidsPerOperation",
                "maxPidsPerOperation must be within 1..%d, was %d",
                Operation.MAX_PIDS,
                maxPidsPerOperation);
        List<Operation<String>> operations = new ArrayList<>();
        for (Recommendation r : recommendations) {
            List<String> ids = r.pidIds();
            for (int from = 0; from < ids.size(); from += maxPidsPerOperation) {
                operations.add(new Operation.Migrate<>(
                        ids.subList(from, Math.min(ids.size(), from + maxPidsPerOperation)),
                        r.target().module()));
            }
        }
        return operations;
    }
}
