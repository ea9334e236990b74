package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.ModuleUsage;
import io.pidpool.core.advice.PidUsage;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.advice.UsageSnapshot;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAccount;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.QuotaLedger;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Interim {@link UsageReports}: on every call, reads the modules and PIDs from the database, each
 * PID's usage this month from the quota ledger (Redis), the live instance counts from ZooKeeper,
 * and projects them ({@link UsageProjector}). One ledger read per PID, so meant for the sizes the
 * tests and a small cluster have; the leader's usage scan replaces it (see {@link UsageReports}).
 *
 * <p>Module usage is {@link ModuleUsage#estimated estimated} from the module's current PIDs, since
 * no per-module counter exists yet; auto-application therefore stays off unless {@code
 * advice.autoApply.onEstimatedUsage} is set (docs/advice.md §1). Thread-safe.
 */
public final class LedgerUsageReports implements UsageReports {
    private final PidRepository pids;
    private final Supplier<QuotaLedger> ledger;
    private final Supplier<Map<ModuleKey, Integer>> liveInstances;
    private final MonthlyWindow window;
    private final OverageTariff tariff;
    private final UsageProjector projector;
    private final Clock clock;

    /**
     * @param ledger the quota ledger (may throw {@code UNAVAILABLE} while Redis is down)
     * @param liveInstances live instance count per module (absent = 0)
     */
    public LedgerUsageReports(
            PidRepository pids,
            Supplier<QuotaLedger> ledger,
            Supplier<Map<ModuleKey, Integer>> liveInstances,
            MonthlyWindow window,
            OverageTariff tariff,
            UsageProjector projector,
            Clock clock) {
        this.pids = requireNonNull(pids, "pids");
        this.ledger = requireNonNull(ledger, "ledger");
        this.liveInstances = requireNonNull(liveInstances, "liveInstances");
        this.window = requireNonNull(window, "window");
        this.tariff = requireNonNull(tariff, "tariff");
        this.projector = requireNonNull(projector, "projector");
        this.clock = requireNonNull(clock, "clock");
    }

    @Override
    public Optional<UsageReport> latest() {
        Instant now = clock.instant();
        QuotaMonth month = window.monthOf(now);
        QuotaLedger quota = ledger.get();
        Map<ModuleKey, Integer> live = liveInstances.get();
        List<ModuleUsage> modules = new ArrayList<>();
        List<PidUsage> usages = new ArrayList<>();
        for (PidWithModule module : pids.loadPidWithModule()) {
            modules.add(ModuleUsage.estimated(
                    module.module(), live.getOrDefault(module.module().key(), 0)));
            for (PidAccount pid : module.pids()) {
                long used = Math.min(
                        PidUsage.MAX_USED,
                        Math.max(0, quota.usage(pid.id(), month).used()));
                usages.add(new PidUsage(
                        pid.id(), pid.module(), pid.monthlyQuota(), pid.overageAllowance(), used, pid.status()));
            }
        }
        return Optional.of(projector.project(new UsageSnapshot(now, window, tariff, modules, usages)));
    }
}
