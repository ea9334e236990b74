package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Everything the monitor looks at, gathered by the leader at {@code at}: every module (configured or
 * holding PIDs) and every PID with its usage in the month that contains {@code at}.
 *
 * <p>Rejected with {@code INVALID_ARGUMENT}: a module listed twice, a PID listed twice, a PID whose
 * module is not listed, more than {@link #MAX_PIDS} PIDs.
 *
 * @param window the quota window; its zone decides which month {@code at} is in
 * @param tariff the overage price, the same for every PID of the cluster
 */
public record UsageSnapshot(
        Instant at, MonthlyWindow window, OverageTariff tariff, List<ModuleUsage> modules, List<PidUsage> pids) {
    /** Twenty times the design's target of 100,000; keeps every sum inside a {@code long}. */
    public static final int MAX_PIDS = 2_000_000;

    public UsageSnapshot {
        requireNonNull(at, "at");
        requireNonNull(window, "window");
        requireNonNull(tariff, "tariff");
        modules = List.copyOf(requireNonNull(modules, "modules"));
        pids = List.copyOf(requireNonNull(pids, "pids"));
        requireArgument(
                pids.size() <= MAX_PIDS, "pids", "a snapshot holds at most %d PIDs, got %d", MAX_PIDS, pids.size());
        Set<ModuleKey> keys = new HashSet<>(modules.size() * 2);
        for (ModuleUsage module : modules) {
            requireArgument(keys.add(module.key()), "modules", "module %s is listed twice", module.key());
        }
        Set<String> ids = new HashSet<>(pids.size() * 2);
        for (PidUsage pid : pids) {
            requireArgument(ids.add(pid.id()), "pids", "PID %s is listed twice", pid.id());
            requireArgument(
                    keys.contains(pid.module()),
                    "pids.module",
                    "PID %s belongs to module %s, which the snapshot does not list",
                    pid.id(),
                    pid.module());
        }
    }

    /** The modules by key. */
    public Map<ModuleKey, ModuleUsage> modulesByKey() {
        Map<ModuleKey, ModuleUsage> map = new HashMap<>(modules.size() * 2);
        modules.forEach(m -> map.put(m.key(), m));
        return map;
    }
}
