package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Operation;
import java.math.BigDecimal;
import java.util.List;

/**
 * Move these PIDs from {@code source} (which has quota to spare) to {@code target} (which is
 * projected to go over quota), because that lowers the cluster's projected overage cost.
 *
 * <p>Costs are exact. {@link #totalCostBefore()} and {@link #totalCostAfter()} are the cluster's
 * projected overage cost before and after this recommendation when the ones before it in the list
 * were applied first; {@link #delta()} is then strictly negative. {@link #standaloneDelta()} is the
 * change if this recommendation alone were applied to the snapshot: also strictly negative.
 *
 * @param movedRemaining quota the moved PIDs have left (it goes with them)
 */
public record Recommendation(
        ModuleEffect source,
        ModuleEffect target,
        List<String> pidIds,
        long movedRemaining,
        BigDecimal totalCostBefore,
        BigDecimal totalCostAfter,
        BigDecimal standaloneDelta) {

    /** How many PIDs are named in the explanation before "and N more". */
    static final int EXPLAINED_PIDS = 10;

    public Recommendation {
        requireNonNull(source, "source");
        requireNonNull(target, "target");
        pidIds = List.copyOf(requireNonNull(pidIds, "pidIds"));
        requireArgument(!pidIds.isEmpty(), "pidIds", "a recommendation moves at least one PID");
        requireNonNull(totalCostBefore, "totalCostBefore");
        requireNonNull(totalCostAfter, "totalCostAfter");
        requireNonNull(standaloneDelta, "standaloneDelta");
    }

    /** {@code totalCostAfter - totalCostBefore}: strictly negative. */
    public BigDecimal delta() {
        return totalCostAfter.subtract(totalCostBefore);
    }

    /** The operation that applies it: MIGRATE the PIDs to the target module. */
    public Operation.Migrate<String> toOperation() {
        return new Operation.Migrate<>(pidIds, target.module());
    }

    /** Which module is short, which has slack, what moves and what it saves, in one paragraph. */
    public String explanation() {
        StringBuilder pids = new StringBuilder();
        for (int i = 0; i < Math.min(EXPLAINED_PIDS, pidIds.size()); i++) {
            pids.append(i == 0 ? "" : ", ").append(pidIds.get(i));
        }
        if (pidIds.size() > EXPLAINED_PIDS) {
            pids.append(" and ").append(pidIds.size() - EXPLAINED_PIDS).append(" more");
        }
        return String.format(
                        "Move %d PID%s (%s) from %s to %s. %s has slack: %d commands of quota projected to stay unused"
                                + " this month (%d after the move). %s is short: its projected demand of %d commands"
                                + " exceeds its remaining quota by %d (%d after the move). The moved PIDs carry %d"
                                + " commands of unused quota. Projected overage cost %s -> %s (%s): %s %s -> %s, %s %s"
                                + " -> %s.",
                        pidIds.size(),
                        pidIds.size() == 1 ? "" : "s",
                        pids,
                        source.module(),
                        target.module(),
                        source.module(),
                        source.slackBefore(),
                        source.slackAfter(),
                        target.module(),
                        target.futureDemand(),
                        target.shortfallBefore(),
                        target.shortfallAfter(),
                        movedRemaining,
                        totalCostBefore.toPlainString(),
                        totalCostAfter.toPlainString(),
                        delta().toPlainString(),
                        source.module(),
                        source.costBefore().toPlainString(),
                        source.costAfter().toPlainString(),
                        target.module(),
                        target.costBefore().toPlainString(),
                        target.costAfter().toPlainString())
                + (movedRemaining == 0
                        ? " The moved PIDs have no quota left: the saving comes from the tariff's tiers (the target's"
                                + " overage spread over more accounts, or onto accounts already in a cheaper tier)."
                        : "");
    }
}
