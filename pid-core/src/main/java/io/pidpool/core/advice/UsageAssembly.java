package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The leader's periodic full check  before projection: joins what the database and
 * ZooKeeper say (every PID's module, status, quota and allowance; every module's configuration and
 * live instances) with what Redis counts (this month's usage per PID) into one {@link UsageSnapshot}.
 *
 * <p>Rules, so one odd entry never makes the whole snapshot invalid:
 *
 * <ul>
 *   <li>a PID the database knows but Redis has no counter for has used nothing this month ({@link
 *       #withoutCounter()} counts them: not provisioned yet, or Redis lost its counters);
 *   <li>a counter for a PID the database does not know (deleted since; its usage is still billed
 *       through the ledger) is left out and listed in {@link #unknownPids()};
 *   <li>a counter above {@link PidUsage#MAX_USED} or below 0 (corrupt) is clamped and listed in
 *       {@link #clamped()};
 *   <li>a PID whose module has no configuration gets the module with {@code servers = 1}, as the read
 *       model shows it;
 *   <li>a module's own usage this month ({@link ModuleUsage#usedThisMonth()}) is the sum over its
 *       current PIDs only when the caller says that sum is exact ({@code exact}: no PID entered or left
 *       the module this month, so every command counted on its PIDs was spent by its instances and
 *       nothing it spent is counted elsewhere); otherwise the module is {@link ModuleUsage#estimated
 *       estimated} and the projection says so.
 * </ul>
 *
 * @param snapshot what {@link UsageProjector#project} takes
 */
public record UsageAssembly(
        UsageSnapshot snapshot, int withoutCounter, List<String> unknownPids, List<String> clamped) {
    /** Keeps the lists of odd PIDs short in logs and reports. */
    public static final int MAX_LISTED = 100;

    public UsageAssembly {
        requireNonNull(snapshot, "snapshot");
        unknownPids = List.copyOf(unknownPids);
        clamped = List.copyOf(clamped);
    }

    /** One PID as the database sees it. */
    public record PidFacts(
            String id, ModuleKey module, PidAvailability status, long monthlyQuota, long overageAllowance) {
        public PidFacts {
            requireNonNull(id, "id");
            requireNonNull(module, "module");
            requireNonNull(status, "status");
        }
    }

    /** One module: its configuration and how many of its instances are live now. */
    public record ModuleFacts(ModuleConfig config, int liveInstances) {
        public ModuleFacts {
            requireNonNull(config, "config");
        }
    }

    /**
     * Every module's usage estimated (nothing is known about PIDs moving between modules).
     *
     * @param used this month's usage per PID id, as Redis counts it (net of refunds)
     */
    public static UsageAssembly assemble(
            Instant at,
            MonthlyWindow window,
            OverageTariff tariff,
            Collection<ModuleFacts> modules,
            Collection<PidFacts> pids,
            Map<String, Long> used) {
        return assemble(at, window, tariff, modules, pids, used, key -> false);
    }

    /**
     * @param used this month's usage per PID id, as Redis counts it (net of refunds)
     * @param exact modules whose PID set did not change this month: their usage is the sum over their
     *     PIDs' counters, a real figure ({@link ModuleUsage#of}); the others are estimated
     */
    public static UsageAssembly assemble(
            Instant at,
            MonthlyWindow window,
            OverageTariff tariff,
            Collection<ModuleFacts> modules,
            Collection<PidFacts> pids,
            Map<String, Long> used,
            Predicate<ModuleKey> exact) {
        requireNonNull(exact, "exact");
        requireNonNull(modules, "modules");
        requireNonNull(pids, "pids");
        requireNonNull(used, "used");
        Map<ModuleKey, ModuleUsage> byKey = new LinkedHashMap<>();
        for (ModuleFacts m : modules) {
            byKey.putIfAbsent(m.config().key(), ModuleUsage.estimated(m.config(), m.liveInstances()));
        }
        List<PidUsage> usages = new ArrayList<>(pids.size());
        Set<String> known = new HashSet<>(pids.size() * 2);
        int withoutCounter = 0;
        List<String> clamped = new ArrayList<>();
        for (PidFacts pid : pids) {
            known.add(pid.id());
            byKey.computeIfAbsent(pid.module(), key -> ModuleUsage.estimated(ModuleConfig.of(key, 1), 0));
            Long counted = used.get(pid.id());
            long u;
            if (counted == null) {
                withoutCounter++;
                u = 0;
            } else if (counted < 0 || counted > PidUsage.MAX_USED) {
                u = Math.max(0, Math.min(PidUsage.MAX_USED, counted));
                note(clamped, pid.id());
            } else {
                u = counted;
            }
            usages.add(
                    new PidUsage(pid.id(), pid.module(), pid.monthlyQuota(), pid.overageAllowance(), u, pid.status()));
        }
        List<String> unknown = new ArrayList<>();
        for (String id : used.keySet()) {
            if (!known.contains(id)) {
                note(unknown, id);
            }
        }
        unknown.sort(null);
        Map<ModuleKey, Long> sums = new HashMap<>(byKey.size() * 2);
        for (PidUsage u : usages) {
            sums.merge(u.module(), u.used(), (a, b) -> Math.min(ModuleUsage.MAX_MODULE_USAGE, a + b));
        }
        for (Map.Entry<ModuleKey, ModuleUsage> e : byKey.entrySet()) {
            if (exact.test(e.getKey())) {
                ModuleUsage m = e.getValue();
                e.setValue(ModuleUsage.of(m.config(), m.liveInstances(), sums.getOrDefault(e.getKey(), 0L)));
            }
        }
        UsageSnapshot snapshot = new UsageSnapshot(at, window, tariff, List.copyOf(byKey.values()), usages);
        return new UsageAssembly(snapshot, withoutCounter, unknown, clamped);
    }

    private static void note(List<String> list, String id) {
        if (list.size() < MAX_LISTED) {
            list.add(id);
        }
    }
}
