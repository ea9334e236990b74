package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleKey;
import java.math.BigDecimal;

/**
 * One module's figures for the month.
 *
 * @param minActivePids the fewest ACTIVE PIDs recommendations leave here ({@link
 *     ModuleUsage#minActivePids()})
 * @param pids PIDs of the module, any status
 * @param activePids of which ACTIVE: the ones its demand is served from
 * @param quota monthly quotas summed over all its PIDs
 * @param used this month's usage summed over all its PIDs
 * @param remaining quota left before overage, summed over its ACTIVE PIDs
 * @param headroom commands left before the hard limits, summed over its ACTIVE PIDs
 * @param usedThisMonth what the module itself spent this month: the basis of its observed rate
 * @param usageEstimated whether {@code usedThisMonth} is the sum over its current PIDs rather than
 *     the module's own count (see {@link ModuleUsage#usedThisMonth()})
 * @param futureDemand commands the module is projected to need for the rest of the month
 * @param projectedOverage commands above quota at month end, summed over its PIDs (overage so far
 *     included); with no ACTIVE PID, the whole future demand counts as overage
 * @param projectedOverageCost the tariff's price of it, per PID; exact
 */
public record ModuleProjection(
        ModuleKey key,
        int liveInstances,
        int minActivePids,
        int pids,
        int activePids,
        long quota,
        long used,
        long remaining,
        long headroom,
        long usedThisMonth,
        boolean usageEstimated,
        long futureDemand,
        long projectedOverage,
        BigDecimal projectedOverageCost) {

    /** {@code used / quota}; see {@link PidProjection#utilisation()} for quota 0. */
    public double utilisation() {
        return PidProjection.ratio(used, quota);
    }

    /** What its PIDs are projected to show at month end: {@code used + futureDemand}. */
    public long projectedUsed() {
        return used + futureDemand;
    }

    /** Quota projected to stay unused at month end: {@code max(0, remaining - futureDemand)}. */
    public long slack() {
        return Math.max(0, remaining - futureDemand);
    }

    /** Future demand beyond the quota left: {@code max(0, futureDemand - remaining)}. */
    public long shortfall() {
        return Math.max(0, futureDemand - remaining);
    }

    /**
     * Future demand beyond the hard limits of its ACTIVE PIDs: what the ledger would refuse unless
     * PIDs or allowances are added. Counted in the overage cost all the same (docs/advice.md).
     */
    public long projectedRefused() {
        return Math.max(0, futureDemand - headroom);
    }

    /** Demand with no ACTIVE PID to go to (priced as one account's overage). */
    public long unplacedDemand() {
        return activePids == 0 ? futureDemand : 0;
    }
}
