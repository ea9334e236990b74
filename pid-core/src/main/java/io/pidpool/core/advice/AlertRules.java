package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.model.PidAvailability;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Evaluates the alert rules on a {@link UsageReport} and the planner's latest signals, and diffs the
 * result against the alerts open so far.
 *
 * <h2>Rules</h2>
 *
 * <ul>
 *   <li>{@link AlertKind#PID_UTILISATION} / {@link AlertKind#MODULE_UTILISATION}: {@code used >= p% of
 *       monthlyQuota} for a threshold {@code p} of {@link AlertPolicy#utilisationPercents()}, checked
 *       exactly in integers ({@code used * 100 >= p * quota}); only the highest threshold crossed is
 *       open, so crossing 100 % resolves the 80 % alert and raises the 100 % one. A quota of 0 counts
 *       as crossed once anything is used. Module figures sum all its PIDs.
 *   <li>{@link AlertKind#PROJECTED_OVERAGE}: a module's projected overage cost is above {@link
 *       AlertPolicy#projectedCostAbove()}.
 *   <li>{@link AlertKind#PROJECTED_REFUSAL}: a module's projected demand exceeds the hard limits of its
 *       ACTIVE PIDs ({@link ModuleProjection#projectedRefused()} {@code > 0}).
 *   <li>{@link AlertKind#PID_COOLDOWN}: a PID's status is COOLDOWN.
 *   <li>{@link AlertKind#BRAKE_ENGAGED}: the planner's latest plan carries {@link
 *       PlanSignal.BrakeEngaged} for a module. Pass the signals of the most recent plan: the brake
 *       alert stays open while plans keep reporting it and resolves with the first plan that does not.
 *   <li>At most {@link AlertPolicy#maxPidAlerts()} PID alerts are kept (those already open first, then
 *       the most severe, then by key); any others are counted in one {@link
 *       AlertKind#PID_ALERTS_TRUNCATED} alert.
 * </ul>
 *
 * <p><b>De-duplication.</b> An alert's key names its condition (kind, subject, threshold). A key that
 * was open and still holds is {@code stillOpen} and keeps its {@code firstSeen}; a new key is {@code
 * raised} with {@code firstSeen = now}; an open key that no longer holds is {@code resolved}.
 * Results are sorted by key.
 *
 * <p>Concurrency: stateless apart from its immutable policy; thread-safe.
 */
public final class AlertRules {
    /** The subject of cluster-wide alerts. */
    public static final String CLUSTER = "cluster";

    private final AlertPolicy policy;

    public AlertRules(AlertPolicy policy) {
        this.policy = requireNonNull(policy, "policy");
    }

    public AlertPolicy policy() {
        return policy;
    }

    /**
     * The alerts that hold now and their difference from {@code open}.
     *
     * @param signals the signals of the planner's most recent plan (only {@link
     *     PlanSignal.BrakeEngaged} is used)
     * @param open the alerts open so far; keys must be distinct
     */
    public AlertEvaluation evaluate(
            UsageReport report, List<? extends PlanSignal> signals, Collection<Alert> open, Instant now) {
        requireNonNull(report, "report");
        requireNonNull(signals, "signals");
        requireNonNull(open, "open");
        requireNonNull(now, "now");
        Map<String, Alert> previous = new HashMap<>(open.size() * 2);
        for (Alert alert : open) {
            requireArgument(alert != null, "open", "open alerts hold a null");
            requireArgument(previous.put(alert.key(), alert) == null, "open", "alert %s is open twice", alert.key());
        }

        // PID alerts may be due for most of 100,000 PIDs near the month's end: decide cheaply first,
        // write messages only for the ones kept.
        List<PidCandidate> candidates = new ArrayList<>();
        for (PidProjection pid : report.pids()) {
            if (policy.pidUtilisation()) {
                int pct = highestCrossed(pid.used(), pid.monthlyQuota());
                if (pct > 0) {
                    candidates.add(new PidCandidate(
                            key(AlertKind.PID_UTILISATION, pid.id(), pct),
                            AlertKind.PID_UTILISATION,
                            pct,
                            policy.severityOf(pct),
                            pid));
                }
            }
            if (pid.status() == PidAvailability.COOLDOWN) {
                candidates.add(new PidCandidate(
                        key(AlertKind.PID_COOLDOWN, pid.id(), 0), AlertKind.PID_COOLDOWN, 0, Severity.WARNING, pid));
            }
        }
        List<Alert> current = new ArrayList<>();
        int dropped = 0;
        if (candidates.size() > policy.maxPidAlerts()) {
            candidates.sort(Comparator.<PidCandidate, Boolean>comparing(c -> !previous.containsKey(c.key))
                    .thenComparing(c -> c.severity, Comparator.reverseOrder())
                    .thenComparing(c -> c.key));
            dropped = candidates.size() - policy.maxPidAlerts();
            candidates = candidates.subList(0, policy.maxPidAlerts());
        }
        for (PidCandidate c : candidates) {
            current.add(pidAlert(c, now));
        }
        if (dropped > 0) {
            current.add(alert(
                    AlertKind.PID_ALERTS_TRUNCATED,
                    CLUSTER,
                    0,
                    Severity.WARNING,
                    now,
                    "%d more PID alerts hold than the %d kept open (utilisation and cooldown); see the usage and"
                            + " PID lists for all of them",
                    dropped,
                    policy.maxPidAlerts()));
        }

        for (ModuleProjection module : report.modules()) {
            String subject = module.key().toString();
            int pct = highestCrossed(module.used(), module.quota());
            if (pct > 0) {
                current.add(alert(
                        AlertKind.MODULE_UTILISATION,
                        subject,
                        pct,
                        policy.severityOf(pct),
                        now,
                        "module %s has used %d of its PIDs' monthly quota %d (%s), at or above the %d %% threshold",
                        subject,
                        module.used(),
                        module.quota(),
                        percent(module.used(), module.quota()),
                        pct));
            }
            if (module.projectedOverageCost().compareTo(policy.projectedCostAbove()) > 0) {
                current.add(alert(
                        AlertKind.PROJECTED_OVERAGE,
                        subject,
                        0,
                        Severity.WARNING,
                        now,
                        "module %s is projected to use %d commands above quota by the end of %s, costing %s"
                                + " (alert above %s); projected demand for the rest of the month %d, quota left %d",
                        subject,
                        module.projectedOverage(),
                        report.month(),
                        module.projectedOverageCost().toPlainString(),
                        policy.projectedCostAbove().toPlainString(),
                        module.futureDemand(),
                        module.remaining()));
            }
            if (module.projectedRefused() > 0) {
                current.add(alert(
                        AlertKind.PROJECTED_REFUSAL,
                        subject,
                        0,
                        Severity.CRITICAL,
                        now,
                        "module %s is projected to need %d commands more than the hard limits of its %d ACTIVE"
                                + " PIDs allow by the end of %s: they would be refused unless PIDs or overage"
                                + " allowance are added",
                        subject,
                        module.projectedRefused(),
                        module.activePids(),
                        report.month()));
            }
        }

        Map<String, PlanSignal.BrakeEngaged> brakes = new TreeMap<>();
        for (PlanSignal signal : signals) {
            if (signal instanceof PlanSignal.BrakeEngaged brake) {
                brakes.put(brake.module().toString(), brake);
            }
        }
        brakes.forEach((subject, brake) -> current.add(alert(
                AlertKind.BRAKE_ENGAGED,
                subject,
                0,
                Severity.CRITICAL,
                now,
                "mass-failure brake engaged in module %s: %d of its %d instances vanished within the brake window;"
                        + " the leader keeps their PIDs reserved and moves nothing there (maintenance mode)",
                subject,
                brake.vanished(),
                brake.instances())));

        return diff(current, previous, now);
    }

    /** A PID alert that is due, before its message is written. */
    private record PidCandidate(String key, AlertKind kind, int pct, Severity severity, PidProjection pid) {}

    private static Alert pidAlert(PidCandidate c, Instant now) {
        PidProjection pid = c.pid;
        String message = c.kind == AlertKind.PID_UTILISATION
                ? String.format(
                        Locale.ROOT,
                        "PID %s of %s has used %d of its monthly quota %d (%s), at or above the %d %% threshold",
                        pid.id(),
                        pid.module(),
                        pid.used(),
                        pid.monthlyQuota(),
                        percent(pid.used(), pid.monthlyQuota()),
                        c.pct)
                : String.format(
                        Locale.ROOT,
                        "PID %s of %s is in cooldown after login failures or conflicts: it is not assigned until"
                                + " the cooldown ends; repeated double logins get an account frozen",
                        pid.id(),
                        pid.module());
        return new Alert(c.key, c.kind, c.severity, pid.id(), message, now);
    }

    private static AlertEvaluation diff(List<Alert> current, Map<String, Alert> previous, Instant now) {
        Map<String, Alert> byKey = new TreeMap<>();
        for (Alert alert : current) {
            byKey.put(alert.key(), alert);
        }
        List<Alert> open = new ArrayList<>(byKey.size());
        List<Alert> raised = new ArrayList<>();
        List<Alert> stillOpen = new ArrayList<>();
        for (Alert alert : byKey.values()) {
            Alert before = previous.get(alert.key());
            if (before == null) {
                raised.add(alert);
                open.add(alert);
            } else {
                Alert kept = alert.withFirstSeen(before.firstSeen());
                stillOpen.add(kept);
                open.add(kept);
            }
        }
        List<Alert> resolved = new ArrayList<>();
        for (Alert before : previous.values()) {
            if (!byKey.containsKey(before.key())) {
                resolved.add(before);
            }
        }
        resolved.sort(Comparator.comparing(Alert::key));
        return new AlertEvaluation(now, open, raised, stillOpen, resolved);
    }

    /** The highest threshold crossed by {@code used} against {@code quota}, or 0. */
    private int highestCrossed(long used, long quota) {
        List<Integer> percents = policy.utilisationPercents();
        for (int i = percents.size() - 1; i >= 0; i--) {
            int pct = percents.get(i);
            if (quota == 0 ? used > 0 : used * 100 >= pct * quota) {
                return pct;
            }
        }
        return 0;
    }

    private static Alert alert(
            AlertKind kind,
            String subject,
            int threshold,
            Severity severity,
            Instant now,
            String template,
            Object... args) {
        return new Alert(
                key(kind, subject, threshold),
                kind,
                severity,
                subject,
                String.format(Locale.ROOT, template, args),
                now);
    }

    private static String key(AlertKind kind, String subject, int threshold) {
        return threshold > 0 ? kind + ":" + subject + ":" + threshold : kind + ":" + subject;
    }

    /** {@code 85.3 %}, rounded down to a tenth (a percentage just below a threshold never reads as it). */
    private static String percent(long used, long quota) {
        if (quota == 0) {
            return used == 0 ? "0.0 %" : "quota 0";
        }
        // used <= 2e6 PIDs * 4e9: times 1,000 still fits in a long
        long tenths = used * 1000 / quota;
        return tenths / 10 + "." + tenths % 10 + " %";
    }
}
