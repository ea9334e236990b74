package io.pidpool.server.leader;

import io.pidpool.core.allocation.PlanSignal;

/**
 * The leader's words for a {@link PlanSignal}: which signals an operator should hear of (brakes,
 * throttles, PIDs nobody can take; the rest is logged at debug) and the text they are reported with.
 * The texts are a contract: the alert service reads them ({@code advice.LeaderAlerts}), and
 * {@code LeaderAlertsTest} pins them.
 *
 * <p>Concurrency: pure functions.
 */
public final class PlanSignals {
    private PlanSignals() {}

    /**
     * The key that identifies the condition while it lasts, so that its alert is raised once, or
     * {@code null} if the signal is only logged.
     */
    public static String alertKey(PlanSignal signal) {
        if (signal instanceof PlanSignal.BrakeEngaged) {
            return "brake:" + signal.module();
        } else if (signal instanceof PlanSignal.Throttled) {
            return "throttled:" + signal.module();
        } else if (signal instanceof PlanSignal.Unassignable) {
            return "unassignable:" + signal.module();
        }
        return null;
    }

    /** The text the signal is alerted or logged with. */
    public static String describe(PlanSignal signal) {
        if (signal instanceof PlanSignal.BrakeEngaged brake) {
            return "ALERT mass-failure brake engaged in " + brake.module() + ": " + brake.vanished() + " of "
                    + brake.instances() + " instances vanished; not redistributing (maintenance mode)";
        } else if (signal instanceof PlanSignal.Throttled throttled) {
            return "move throttle held back " + throttled.deferredMoves() + " moves in " + throttled.module();
        } else if (signal instanceof PlanSignal.Unassignable none) {
            return none.module() + ": " + none.pids().size() + " PIDs have no live instance to go to";
        } else if (signal instanceof PlanSignal.CoolingDown cooling) {
            return cooling.module() + ": " + cooling.pids().size() + " PIDs in cooldown";
        } else if (signal instanceof PlanSignal.AwaitingRelease waiting) {
            return waiting.module() + ": " + waiting.pids().size() + " PIDs await release";
        } else if (signal instanceof PlanSignal.VacancyReserved vacancy) {
            return vacancy.module() + ": slot " + vacancy.slot() + " keeps " + vacancy.reservedPids()
                    + " PIDs for a replacement";
        }
        return String.valueOf(signal);
    }
}
