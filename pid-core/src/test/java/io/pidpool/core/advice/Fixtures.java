package io.pidpool.core.advice;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.OverageTariff.Tier;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Small builders for snapshots in tests. November 2026 in UTC has 30 days. */
final class Fixtures {
    static final MonthlyWindow UTC = new MonthlyWindow(ZoneOffset.UTC);
    /** Half of November 2026 has passed. */
    static final Instant MID_MONTH = Instant.parse("2026-11-16T00:00:00Z");
    /** 0.01 per command for the first 1,000 beyond quota, then 0.02. */
    static final OverageTariff TARIFF = OverageTariff.of(Tier.of(1000, "0.01"), Tier.unbounded("0.02"));

    private Fixtures() {}

    static ModuleKey key(String name) {
        return ModuleKey.parse("dept#" + name + "#sys");
    }

    static ModuleConfig config(String name, int servers, long monthlyDemand, int minPerInstance) {
        return new ModuleConfig(key(name), servers, monthlyDemand, minPerInstance, Map.of());
    }

    static PidUsage pid(String id, String module, long quota, long used) {
        return new PidUsage(id, key(module), quota, 0, used, PidAvailability.ACTIVE);
    }

    static PidUsage pid(String id, String module, long quota, long used, PidAvailability status) {
        return new PidUsage(id, key(module), quota, 0, used, status);
    }

    /** A snapshot builder. */
    static final class Snap {
        private final List<ModuleUsage> modules = new ArrayList<>();
        private final List<PidUsage> pids = new ArrayList<>();
        private Instant at = MID_MONTH;
        private OverageTariff tariff = TARIFF;

        Snap at(Instant instant) {
            this.at = instant;
            return this;
        }

        Snap tariff(OverageTariff t) {
            this.tariff = t;
            return this;
        }

        /** A module with one server, no configured demand, no minimum, one live instance. */
        Snap module(String name, long usedThisMonth) {
            return module(config(name, 1, 0, 0), 1, usedThisMonth);
        }

        Snap module(ModuleConfig config, int live, long usedThisMonth) {
            modules.add(ModuleUsage.of(config, live, usedThisMonth));
            return this;
        }

        Snap module(ModuleUsage usage) {
            modules.add(usage);
            return this;
        }

        Snap pid(PidUsage pid) {
            pids.add(pid);
            return this;
        }

        /** {@code count} ACTIVE PIDs named {@code prefix-i} with this quota and usage. */
        Snap pids(String prefix, String module, int count, long quota, long used) {
            for (int i = 0; i < count; i++) {
                pids.add(Fixtures.pid(prefix + "-" + i, module, quota, used));
            }
            return this;
        }

        UsageSnapshot build() {
            return new UsageSnapshot(at, UTC, tariff, modules, pids);
        }
    }
}
