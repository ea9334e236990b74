package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.UsageProjection;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Projects a {@link UsageSnapshot} to month end: per-PID and per-module usage, remaining quota,
 * utilisation, projected usage, projected overage and its cost.
 *
 * <h2>Model</h2>
 *
 * <p>Demand belongs to the module (the business sends commands through whichever PID its instances
 * hold), so the future is projected per module: {@code futureDemand} from the module's own usage
 * this month and its configured {@code monthlyDemand}, combined by the {@link DemandModel}. That
 * demand is then poured over the module's ACTIVE PIDs "most remaining quota first", which is the
 * SDK's policy: quota left anywhere in the module is used before any PID goes into overage, and
 * overage is spread over the PIDs least over quota first. Each PID's overage is priced by the tariff
 * on its own (tiers are per account). PIDs in COOLDOWN or DISABLED get no new demand but keep the
 * overage they have. A module with demand but no ACTIVE PID is priced as if one account with no
 * quota left served it. The arithmetic is in {@code WaterFill}; the reasoning in {@code
 * docs/advice.md}.
 *
 * <p>Cost: {@code O(P log P)} for P PIDs (one sort of positions per module), plus one tariff
 * evaluation per PID that ends above the common level.
 *
 * <p>Concurrency: stateless; thread-safe.
 */
public final class UsageProjector {
    private final DemandModel demandModel;

    public UsageProjector(DemandModel demandModel) {
        this.demandModel = requireNonNull(demandModel, "demandModel");
    }

    /** A projector with the {@link DemandModel#BLENDED} model. */
    public static UsageProjector blended() {
        return new UsageProjector(DemandModel.BLENDED);
    }

    public DemandModel demandModel() {
        return demandModel;
    }

    public UsageReport project(UsageSnapshot snapshot) {
        requireNonNull(snapshot, "snapshot");
        MonthlyWindow window = snapshot.window();
        Instant at = snapshot.at();
        OverageTariff tariff = snapshot.tariff();
        QuotaMonth month = window.monthOf(at);
        Duration length = window.length(month);
        Duration elapsed = window.elapsed(at);

        List<ModuleUsage> modules = new ArrayList<>(snapshot.modules());
        modules.sort(Comparator.comparing(ModuleUsage::key));
        int m = modules.size();
        Map<ModuleKey, Integer> index = new HashMap<>(m * 2);
        for (int i = 0; i < m; i++) {
            index.put(modules.get(i).key(), i);
        }

        List<PidUsage> pids = snapshot.pids();
        int n = pids.size();
        int[] moduleOf = new int[n];
        int[] pidCount = new int[m];
        int[] activeCount = new int[m];
        long[] quota = new long[m];
        long[] used = new long[m];
        long[] remaining = new long[m];
        long[] headroom = new long[m];
        long[] sunkOverage = new long[m];
        BigDecimal[] sunkCost = new BigDecimal[m];
        Arrays.fill(sunkCost, BigDecimal.ZERO);
        for (int i = 0; i < n; i++) {
            PidUsage pid = pids.get(i);
            int mi = index.get(pid.module());
            moduleOf[i] = mi;
            pidCount[mi]++;
            quota[mi] += pid.monthlyQuota();
            used[mi] += pid.used();
            if (pid.status() == PidAvailability.ACTIVE) {
                activeCount[mi]++;
                remaining[mi] += pid.remaining();
                headroom[mi] += Math.max(0, pid.hardLimit() - pid.used());
            } else if (pid.position() > 0) {
                sunkOverage[mi] += pid.position();
                sunkCost[mi] = sunkCost[mi].add(tariff.costOf(pid.position()));
            }
        }

        long[][] positions = new long[m][];
        int[][] active = new int[m][];
        for (int i = 0; i < m; i++) {
            positions[i] = new long[activeCount[i]];
            active[i] = new int[activeCount[i]];
        }
        int[] fillCount = new int[m];
        for (int i = 0; i < n; i++) {
            PidUsage pid = pids.get(i);
            if (pid.status() == PidAvailability.ACTIVE) {
                int mi = moduleOf[i];
                positions[mi][fillCount[mi]] = pid.position();
                active[mi][fillCount[mi]++] = i;
            }
        }

        long lengthMillis = length.toMillis();
        long elapsedMillis = Math.min(elapsed.toMillis(), lengthMillis);
        WaterFill.Multiset none = WaterFill.Multiset.empty(tariff);
        List<ModuleProjection> projections = new ArrayList<>(m);
        Map<ModuleKey, ModuleProjection> byKey = new HashMap<>(m * 2);
        Map<ModuleKey, ModuleModel> models = new HashMap<>(m * 2);
        WaterFill.Fill[] fills = new WaterFill.Fill[m];
        BigDecimal[] levelCost = new BigDecimal[m];
        BigDecimal[] raisedCost = new BigDecimal[m];
        for (int i = 0; i < m; i++) {
            ModuleUsage usage = modules.get(i);
            boolean estimated = usage.usedThisMonth().isEmpty();
            long own = estimated
                    ? Math.min(used[i], ModuleUsage.MAX_MODULE_USAGE)
                    : usage.usedThisMonth().getAsLong();
            long demand = futureDemand(window, at, own, usage.config().monthlyDemand(), elapsedMillis, lengthMillis);
            WaterFill.Multiset base = WaterFill.Multiset.of(positions[i], tariff);
            ModuleModel model = new ModuleModel(
                    usage.key(), usage.minActivePids(), demand, base, active[i], sunkOverage[i], sunkCost[i], tariff);
            WaterFill.Fill fill = model.fill(none, none, 0, 0);
            fills[i] = fill;
            levelCost[i] = fill.level() > 0 ? tariff.costOf(fill.level()) : BigDecimal.ZERO;
            raisedCost[i] = fill.level() + 1 > 0 ? tariff.costOf(fill.level() + 1) : BigDecimal.ZERO;
            ModuleProjection projection = new ModuleProjection(
                    usage.key(),
                    usage.liveInstances(),
                    usage.minActivePids(),
                    pidCount[i],
                    activeCount[i],
                    quota[i],
                    used[i],
                    remaining[i],
                    headroom[i],
                    own,
                    estimated,
                    demand,
                    fill.overage() + sunkOverage[i],
                    fill.cost().add(sunkCost[i]));
            projections.add(projection);
            byKey.put(usage.key(), projection);
            models.put(usage.key(), model);
        }

        long[] rank = new long[m];
        List<PidProjection> pidProjections = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            PidUsage pid = pids.get(i);
            long x = pid.position();
            long finalX = x;
            BigDecimal cost;
            if (pid.status() == PidAvailability.ACTIVE) {
                int mi = moduleOf[i];
                WaterFill.Fill fill = fills[mi];
                if (x <= fill.level()) {
                    finalX = fill.finalPosition(x, rank[mi]++);
                    cost = finalX == fill.level() ? levelCost[mi] : raisedCost[mi];
                } else {
                    cost = x > 0 ? tariff.costOf(x) : BigDecimal.ZERO;
                }
            } else {
                cost = x > 0 ? tariff.costOf(x) : BigDecimal.ZERO;
            }
            pidProjections.add(new PidProjection(
                    pid.id(),
                    pid.module(),
                    pid.status(),
                    pid.monthlyQuota(),
                    pid.overageAllowance(),
                    pid.used(),
                    pid.monthlyQuota() + finalX,
                    cost));
        }
        return new UsageReport(
                month, at, elapsed, length, tariff, demandModel, projections, byKey, pidProjections, models);
    }

    /** The module's demand for the rest of the month (see {@link DemandModel}). */
    private long futureDemand(
            MonthlyWindow window,
            Instant at,
            long usedThisMonth,
            long monthlyDemand,
            long elapsedMillis,
            long lengthMillis) {
        long projected = UsageProjection.linear(window, at, usedThisMonth).projected();
        long observed = Math.min(ModuleUsage.MAX_MODULE_USAGE, projected - usedThisMonth);
        long configured = DemandModel.ceilDiv(
                BigInteger.valueOf(monthlyDemand).multiply(BigInteger.valueOf(lengthMillis - elapsedMillis)),
                lengthMillis);
        return demandModel.combine(observed, configured, monthlyDemand > 0, elapsedMillis, lengthMillis);
    }
}
