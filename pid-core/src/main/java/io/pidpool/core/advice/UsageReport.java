package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The projection of one {@link UsageSnapshot}: per-PID and per-module figures and the cluster's
 * totals, as {@link UsageProjector#project} computed them at {@link #at()}. Immutable; the lists are
 * unmodifiable.
 */
public final class UsageReport {
    private final QuotaMonth month;
    private final Instant at;
    private final Duration elapsed;
    private final Duration length;
    private final OverageTariff tariff;
    private final DemandModel demandModel;
    private final List<ModuleProjection> modules;
    private final Map<ModuleKey, ModuleProjection> byKey;
    private final List<PidProjection> pids;
    private final long totalUsed;
    private final long totalProjectedOverage;
    private final BigDecimal totalProjectedOverageCost;
    private final Map<ModuleKey, ModuleModel> models;

    UsageReport(
            QuotaMonth month,
            Instant at,
            Duration elapsed,
            Duration length,
            OverageTariff tariff,
            DemandModel demandModel,
            List<ModuleProjection> modules,
            Map<ModuleKey, ModuleProjection> byKey,
            List<PidProjection> pids,
            Map<ModuleKey, ModuleModel> models) {
        this.month = month;
        this.at = at;
        this.elapsed = elapsed;
        this.length = length;
        this.tariff = tariff;
        this.demandModel = demandModel;
        this.modules = Collections.unmodifiableList(modules);
        this.byKey = Collections.unmodifiableMap(byKey);
        this.pids = Collections.unmodifiableList(pids);
        this.models = Collections.unmodifiableMap(models);
        long used = 0;
        long overage = 0;
        BigDecimal cost = BigDecimal.ZERO;
        for (ModuleProjection m : modules) {
            used += m.used();
            overage += m.projectedOverage();
            cost = cost.add(m.projectedOverageCost());
        }
        this.totalUsed = used;
        this.totalProjectedOverage = overage;
        this.totalProjectedOverageCost = cost;
    }

    public QuotaMonth month() {
        return month;
    }

    /** When the snapshot was taken. */
    public Instant at() {
        return at;
    }

    /** Time since the month started. */
    public Duration elapsed() {
        return elapsed;
    }

    /** The month's length in the window's zone. */
    public Duration length() {
        return length;
    }

    /** {@code elapsed / length}, in {@code [0, 1)}. */
    public double elapsedFraction() {
        return (double) elapsed.toMillis() / length.toMillis();
    }

    public OverageTariff tariff() {
        return tariff;
    }

    public DemandModel demandModel() {
        return demandModel;
    }

    /** Every module of the snapshot, in key order. */
    public List<ModuleProjection> modules() {
        return modules;
    }

    public Optional<ModuleProjection> module(ModuleKey key) {
        return Optional.ofNullable(byKey.get(key));
    }

    /** Every PID of the snapshot, in snapshot order. */
    public List<PidProjection> pids() {
        return pids;
    }

    /** This month's usage over all PIDs. */
    public long totalUsed() {
        return totalUsed;
    }

    /** Commands above quota at month end over all modules. */
    public long totalProjectedOverage() {
        return totalProjectedOverage;
    }

    /** The cluster's projected overage cost: what recommendations lower. Exact. */
    public BigDecimal totalProjectedOverageCost() {
        return totalProjectedOverageCost;
    }

    Map<ModuleKey, ModuleModel> models() {
        return models;
    }

    @Override
    public String toString() {
        return "UsageReport[" + month + " at " + at + ", " + modules.size() + " modules, " + pids.size()
                + " PIDs, projected overage cost " + totalProjectedOverageCost.toPlainString() + "]";
    }
}
