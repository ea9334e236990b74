package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;

/**
 * A module reduced to what its cost depends on: its future demand, the positions of its ACTIVE PIDs
 * and the fixed overage of the others. Shared by {@link UsageProjector} (the figures) and {@link
 * Recommender} (what-if costs). Package-private; immutable.
 *
 * @param activePids indices into {@link UsageReport#pids()} of its ACTIVE PIDs, in snapshot order
 * @param sunkOverage overage so far of its PIDs in COOLDOWN or DISABLED (they get no new demand)
 * @param sunkCost the tariff's price of it
 */
record ModuleModel(
        ModuleKey key,
        int minActivePids,
        long demand,
        WaterFill.Multiset base,
        int[] activePids,
        long sunkOverage,
        BigDecimal sunkCost,
        OverageTariff tariff) {

    /** The fill of its ACTIVE PIDs, changed by {@code added}, {@code removed} and one extra PID. */
    WaterFill.Fill fill(WaterFill.Multiset added, WaterFill.Multiset removed, long extra, int extraSign) {
        return WaterFill.fill(tariff, demand, base, added, removed, extra, extraSign);
    }

    /** The module's projected overage cost with its ACTIVE PIDs changed so. */
    BigDecimal cost(WaterFill.Multiset added, WaterFill.Multiset removed, long extra, int extraSign) {
        return fill(added, removed, extra, extraSign).cost().add(sunkCost);
    }
}
