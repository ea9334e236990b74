package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleKey;
import java.math.BigDecimal;

/**
 * What a {@link Recommendation} does to one module, in the state the recommendations before it
 * leave (they are meant to be applied in order).
 *
 * @param remainingBefore quota left over its ACTIVE PIDs before the move
 * @param futureDemand its projected demand for the rest of the month (a move does not change it)
 * @param costBefore its projected overage cost before the move
 */
public record ModuleEffect(
        ModuleKey module,
        int activePidsBefore,
        int activePidsAfter,
        long remainingBefore,
        long remainingAfter,
        long futureDemand,
        BigDecimal costBefore,
        BigDecimal costAfter) {

    /** Quota projected to stay unused before the move. */
    public long slackBefore() {
        return Math.max(0, remainingBefore - futureDemand);
    }

    public long slackAfter() {
        return Math.max(0, remainingAfter - futureDemand);
    }

    /** Demand projected beyond the quota left, before the move. */
    public long shortfallBefore() {
        return Math.max(0, futureDemand - remainingBefore);
    }

    public long shortfallAfter() {
        return Math.max(0, futureDemand - remainingAfter);
    }

    public BigDecimal costDelta() {
        return costAfter.subtract(costBefore);
    }
}
