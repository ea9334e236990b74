package io.pidpool.core.allocation;

import io.pidpool.core.model.ModuleKey;
import java.util.Set;

/** Something a {@link Plan} reports rather than does: for alerts, metrics and the console. */
public sealed interface PlanSignal {
    ModuleKey module();

    /**
     * More than the policy's share of the module's instances vanished within the brake window: the
     * planner keeps vacant shares reserved and starts no rebalancing moves in this module
     * (maintenance mode) until the window has passed.
     */
    record BrakeEngaged(ModuleKey module, int vanished, int instances) implements PlanSignal {}

    /** The move throttle held back this many rebalancing moves; later plans make them. */
    record Throttled(ModuleKey module, int deferredMoves) implements PlanSignal {}

    /**
     * Desired PIDs that cannot be handed out yet because an instance may still hold them: an
     * unacknowledged DELETING, a departed instance within its grace period, or a holder in another
     * module (a migration). A PID that stays here long points at a stuck client.
     */
    record AwaitingRelease(ModuleKey module, Set<String> pids) implements PlanSignal {
        public AwaitingRelease {
            pids = Set.copyOf(pids);
        }
    }

    /**
     * Desired PIDs that are in cooldown ({@link ModuleSnapshot#cooldowns()}): handed to nobody, and
     * withdrawn from their holder, until {@code nextEndNanos} (the earliest of their cooldown ends).
     */
    record CoolingDown(ModuleKey module, Set<String> pids, long nextEndNanos) implements PlanSignal {
        public CoolingDown {
            pids = Set.copyOf(pids);
        }
    }

    /** Desired PIDs that nobody can use: the module has no live instance. */
    record Unassignable(ModuleKey module, Set<String> pids) implements PlanSignal {
        public Unassignable {
            pids = Set.copyOf(pids);
        }
    }

    /**
     * A vacant slot keeps {@code reservedPids} PIDs for the instance that will take it, until
     * {@code untilNanos} (not while the brake is engaged: then until the brake lets go).
     */
    record VacancyReserved(ModuleKey module, int slot, int reservedPids, long untilNanos) implements PlanSignal {}
}
