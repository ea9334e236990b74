package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Duration;

/**
 * The knobs of the {@link AllocationPlanner}. All durations are measured on the leader's monotonic
 * clock.
 *
 * @param grace how long after an instance's ephemeral node vanished its PIDs stay untouchable. It
 *     must cover the client's own detection delay (it stops granting and logs out within 2T/3 of
 *     its last ZooKeeper reply, T = negotiated session timeout) plus its logout time plus a margin
 *     (docs/design.md §6); a PID whose holder acknowledged DELETED, or released it on a graceful close,
 *     needs no grace
 * @param rebalanceDelay how long a vacant slot's share waits for a replacement instance, counted
 *     from the departure, before it is spread over the live instances
 * @param maxMovesPerModule the most rebalancing moves (DELETING of a PID that is to be handed to
 *     another instance) one plan starts in one module; 0 freezes rebalancing
 * @param maxMovesPerPlan the most rebalancing moves one plan starts in the whole cluster
 * @param brakeShare the mass-failure brake engages in a module of at least {@link
 *     #BRAKE_MIN_INSTANCES} instances when more than this share of them failed (vanished while they
 *     might still hold a PID they had not released) within {@code brakeWindow}; a graceful leave is
 *     not a failure; 1.0 disables the brake
 * @param brakeWindow how far back departures count for the brake
 */
public record PlannerPolicy(
        Duration grace,
        Duration rebalanceDelay,
        int maxMovesPerModule,
        int maxMovesPerPlan,
        double brakeShare,
        Duration brakeWindow) {
    /**
     * The smallest module (live instances plus those that failed within the window) the brake applies
     * to. Below it there is no mass to fail: with one instance every crash is "all of them", and with
     * two both gone leaves nobody to stampede onto, so the brake would only raise an alert.
     */
    public static final int BRAKE_MIN_INSTANCES = 3;

    public PlannerPolicy {
        requireNonNegative(grace, "grace");
        requireNonNegative(rebalanceDelay, "rebalanceDelay");
        requireNonNegative(brakeWindow, "brakeWindow");
        requireArgument(
                maxMovesPerModule >= 0,
                "maxMovesPerModule",
                "maxMovesPerModule must be >= 0, was %d",
                maxMovesPerModule);
        requireArgument(
                maxMovesPerPlan >= 0, "maxMovesPerPlan", "maxMovesPerPlan must be >= 0, was %d", maxMovesPerPlan);
        requireArgument(
                brakeShare > 0 && brakeShare <= 1,
                "brakeShare",
                "brakeShare must be within (0, 1], was %s",
                brakeShare);
    }

    /**
     * Defaults for a given grace period: replacements are awaited for one minute, at most 1,000
     * moves per module and 10,000 per plan, and the brake engages when more than half of a module's
     * instances vanished within one minute.
     */
    public static PlannerPolicy defaults(Duration grace) {
        return new PlannerPolicy(grace, Duration.ofMinutes(1), 1_000, 10_000, 0.5, Duration.ofMinutes(1));
    }

    public PlannerPolicy withRebalanceDelay(Duration delay) {
        return new PlannerPolicy(grace, delay, maxMovesPerModule, maxMovesPerPlan, brakeShare, brakeWindow);
    }

    public PlannerPolicy withMoveLimits(int perModule, int perPlan) {
        return new PlannerPolicy(grace, rebalanceDelay, perModule, perPlan, brakeShare, brakeWindow);
    }

    public PlannerPolicy withBrake(double share, Duration window) {
        return new PlannerPolicy(grace, rebalanceDelay, maxMovesPerModule, maxMovesPerPlan, share, window);
    }

    private static void requireNonNegative(Duration duration, String field) {
        requireNonNull(duration, field);
        requireArgument(!duration.isNegative(), field, "%s must not be negative, was %s", field, duration);
    }
}
