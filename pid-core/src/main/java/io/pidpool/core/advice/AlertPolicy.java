package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

/**
 * Thresholds of {@link AlertRules}.
 *
 * @param utilisationPercents utilisation thresholds in percent of the monthly quota, each {@code
 *     1..1000}, distinct; sorted on construction; empty disables utilisation alerts. At or above
 *     100 % an alert is {@link Severity#CRITICAL}, below {@link Severity#WARNING}
 * @param pidUtilisation whether utilisation is also alerted per PID (always per module)
 * @param projectedCostAbove a module's projected overage cost must be above this ({@code >= 0}) to
 *     raise {@link AlertKind#PROJECTED_OVERAGE}
 * @param maxPidAlerts the most PID alerts (utilisation, cooldown) open at once, {@code >= 0}; the
 *     rest are counted in one {@link AlertKind#PID_ALERTS_TRUNCATED} alert rather than flooding the
 *     store and the webhooks near the month's end, when thousands of PIDs cross 80 % together
 */
public record AlertPolicy(
        List<Integer> utilisationPercents, boolean pidUtilisation, BigDecimal projectedCostAbove, int maxPidAlerts) {
    public static final int MAX_PERCENT = 1000;

    public AlertPolicy {
        requireNonNull(utilisationPercents, "utilisationPercents");
        List<Integer> sorted = new ArrayList<>(utilisationPercents.size());
        for (Integer pct : utilisationPercents) {
            requireArgument(
                    pct != null && pct >= 1 && pct <= MAX_PERCENT,
                    "utilisationPercents",
                    "a utilisation threshold must be within 1..%d %%, was %s",
                    MAX_PERCENT,
                    pct);
            requireArgument(
                    !sorted.contains(pct), "utilisationPercents", "utilisation threshold %d %% is listed twice", pct);
            sorted.add(pct);
        }
        sorted.sort(null);
        utilisationPercents = List.copyOf(sorted);
        requireNonNull(projectedCostAbove, "projectedCostAbove");
        requireArgument(
                projectedCostAbove.signum() >= 0,
                "projectedCostAbove",
                "projectedCostAbove must be >= 0, was %s",
                projectedCostAbove);
        requireArgument(maxPidAlerts >= 0, "maxPidAlerts", "maxPidAlerts must be >= 0, was %d", maxPidAlerts);
    }

    /** 80 % and 100 %, per PID and per module; any projected overage cost; at most 1,000 PID alerts. */
    public static AlertPolicy defaults() {
        return new AlertPolicy(List.of(80, 100), true, BigDecimal.ZERO, 1000);
    }

    public AlertPolicy withUtilisationPercents(List<Integer> percents) {
        return new AlertPolicy(percents, pidUtilisation, projectedCostAbove, maxPidAlerts);
    }

    public AlertPolicy withPidUtilisation(boolean enabled) {
        return new AlertPolicy(utilisationPercents, enabled, projectedCostAbove, maxPidAlerts);
    }

    public AlertPolicy withProjectedCostAbove(BigDecimal amount) {
        return new AlertPolicy(utilisationPercents, pidUtilisation, amount, maxPidAlerts);
    }

    public AlertPolicy withMaxPidAlerts(int max) {
        return new AlertPolicy(utilisationPercents, pidUtilisation, projectedCostAbove, max);
    }

    /** {@link Severity#CRITICAL} from 100 %, {@link Severity#WARNING} below. */
    public Severity severityOf(int percent) {
        return percent >= 100 ? Severity.CRITICAL : Severity.WARNING;
    }
}
