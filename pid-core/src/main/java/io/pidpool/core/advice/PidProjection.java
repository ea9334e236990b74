package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import java.math.BigDecimal;

/**
 * One PID's figures for the month: what it used, what it is projected to show at month end under
 * its module's demand, and what that costs.
 *
 * @param projectedUsed usage at month end if the module's projected demand is served "most remaining
 *     quota first" over its ACTIVE PIDs; {@code used} for a PID in COOLDOWN or DISABLED (it gets no
 *     new demand). Demand, not a forecast of what the ledger will allow: it may exceed {@link
 *     #hardLimit()}, see {@link #projectedBeyondLimit()}
 * @param projectedOverageCost the tariff's price of {@link #projectedOverage()}; exact
 */
public record PidProjection(
        String id,
        ModuleKey module,
        PidAvailability status,
        long monthlyQuota,
        long overageAllowance,
        long used,
        long projectedUsed,
        BigDecimal projectedOverageCost) {

    public long hardLimit() {
        return monthlyQuota + overageAllowance;
    }

    /** Commands left before overage starts. */
    public long remaining() {
        return Math.max(0, monthlyQuota - used);
    }

    /**
     * {@code used / monthlyQuota} (1.0 = the quota is used up). A PID with quota 0 is at 0.0 while
     * unused and at {@link Double#POSITIVE_INFINITY} once used: callers that write JSON must map it.
     */
    public double utilisation() {
        return ratio(used, monthlyQuota);
    }

    /** Commands above quota at month end (the overage so far included). */
    public long projectedOverage() {
        return Math.max(0, projectedUsed - monthlyQuota);
    }

    /** Commands of projected demand the hard limit would refuse. */
    public long projectedBeyondLimit() {
        return Math.max(0, projectedUsed - hardLimit());
    }

    static double ratio(long used, long quota) {
        if (quota == 0) {
            return used == 0 ? 0.0 : Double.POSITIVE_INFINITY;
        }
        return (double) used / quota;
    }
}
