package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import java.util.OptionalLong;

/**
 * One module as the monitor sees it.
 *
 * @param config the operator's configuration: {@code servers}, {@code monthlyDemand} and {@code
 *     minPerInstance} are used here
 * @param liveInstances instances whose ephemeral node exists now
 * @param usedThisMonth commands the module's instances spent this month, on whichever PIDs they
 *     held. Demand belongs to the module, not to the PIDs: a PID migrated mid-month carries its usage
 *     with it, so summing the module's current PIDs credits the new module with the old one's work.
 *     When empty, that sum is used anyway and the projection says so ({@link
 *     ModuleProjection#usageEstimated()}); see {@code docs/advice.md} for why automatic application
 *     should not run on estimated usage.
 */
public record ModuleUsage(ModuleConfig config, int liveInstances, OptionalLong usedThisMonth) {
    /** A bound that keeps every sum in this package inside a {@code long}. */
    public static final long MAX_MODULE_USAGE = 1_000_000_000_000_000L;

    public ModuleUsage {
        requireNonNull(config, "modules.config");
        requireArgument(
                liveInstances >= 0,
                "modules.liveInstances",
                "liveInstances of %s must be >= 0, was %d",
                config.key(),
                liveInstances);
        usedThisMonth = usedThisMonth == null ? OptionalLong.empty() : usedThisMonth;
        usedThisMonth.ifPresent(used -> requireArgument(
                used >= 0 && used <= MAX_MODULE_USAGE,
                "modules.usedThisMonth",
                "usedThisMonth of %s must be within 0..%d, was %d",
                config.key(),
                MAX_MODULE_USAGE,
                used));
    }

    /** A module whose own usage is known. */
    public static ModuleUsage of(ModuleConfig config, int liveInstances, long usedThisMonth) {
        return new ModuleUsage(config, liveInstances, OptionalLong.of(usedThisMonth));
    }

    /** A module whose usage is estimated from its current PIDs. */
    public static ModuleUsage estimated(ModuleConfig config, int liveInstances) {
        return new ModuleUsage(config, liveInstances, OptionalLong.empty());
    }

    public ModuleKey key() {
        return config.key();
    }

    /**
     * The fewest ACTIVE PIDs a recommendation leaves in this module: {@code max(minPerInstance, 1)}
     * per instance, counting {@code max(liveInstances, servers)} instances. Live instances dip during
     * a deploy or a crash (and the planner keeps vacant slots' shares for the replacements), so the
     * configured server count counts too; and a live instance that holds no PID cannot serve at all,
     * so a minimum of 0 still means one each.
     */
    public int minActivePids() {
        long floor = (long) Math.max(config.minPerInstance(), 1) * Math.max(liveInstances, config.servers());
        return (int) Math.min(Integer.MAX_VALUE, floor);
    }
}
