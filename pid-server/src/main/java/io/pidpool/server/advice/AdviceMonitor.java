package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertEvaluation;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertRules;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.Recommender;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.usage.UsageReports;
import java.time.Clock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's monitoring round, every {@code advice.evaluateIntervalMs} while this server leads:
 * take the latest {@link UsageReport}, evaluate the {@link AlertRules} against the open alerts they
 * own, store the outcome ({@link AlertService#apply}), compute the recommendations and, with
 * auto-apply on, submit them ({@link AutoApplier}).
 *
 * <p><b>Who owns which alert.</b> The rules own utilisation, projected overage/refusal, cooldown (from
 * each PID's status) and the truncation count: those they no longer see are resolved here. The
 * mass-failure brake ({@link AlertKind#BRAKE_ENGAGED}) and other leader events are owned by the
 * leader's sink, which sees the planner's signals; the rules get no plan signals here, so they never
 * resolve a brake. Modules with an open brake alert are frozen for the recommender.
 *
 * <p>Concurrency: rounds run on the alert service's thread, serial with the leader sink's writes.
 * {@link #recommendations()} runs on the caller's thread (HTTP) and only reads.
 */
public final class AdviceMonitor implements AdviceApi, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdviceMonitor.class);
    static final Set<AlertKind> RULE_KINDS = EnumSet.of(
            AlertKind.PID_UTILISATION,
            AlertKind.MODULE_UTILISATION,
            AlertKind.PROJECTED_OVERAGE,
            AlertKind.PROJECTED_REFUSAL,
            AlertKind.PID_COOLDOWN,
            AlertKind.PID_ALERTS_TRUNCATED);

    private final BooleanSupplier leading;
    private final UsageReports reports;
    private final AlertService alerts;
    private final AlertRules rules;
    private final Recommender recommender;
    private final AutoApplier autoApply; // null: off
    private final AlertAcks acks;
    private final Clock clock;
    private volatile ScheduledFuture<?> schedule;

    AdviceMonitor(
            BooleanSupplier leading,
            UsageReports reports,
            AlertService alerts,
            AlertRules rules,
            Recommender recommender,
            AutoApplier autoApply,
            AlertAcks acks,
            Clock clock) {
        this.leading = requireNonNull(leading, "leading");
        this.reports = requireNonNull(reports, "reports");
        this.alerts = requireNonNull(alerts, "alerts");
        this.rules = requireNonNull(rules, "rules");
        this.recommender = requireNonNull(recommender, "recommender");
        this.autoApply = autoApply;
        this.acks = requireNonNull(acks, "acks");
        this.clock = requireNonNull(clock, "clock");
    }

    /** Runs a round every {@code interval} (the first after one interval). */
    public AdviceMonitor start(Duration interval) {
        schedule = alerts.executor()
                .scheduleWithFixedDelay(
                        this::guardedRound, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void guardedRound() {
        try {
            round();
        } catch (RuntimeException e) {
            log.warn("monitoring round failed: {}", e.getMessage());
        }
    }

    /** One round, on the calling thread; does nothing unless this server leads. Returns whether it ran. */
    boolean round() {
        if (!leading.getAsBoolean()) {
            return false;
        }
        Optional<UsageReport> latest = reports.latest();
        if (latest.isEmpty()) {
            return false;
        }
        UsageReport report = latest.get();
        List<StoredAlert> open = alerts.open();
        List<Alert> owned = open.stream()
                .filter(a -> RULE_KINDS.contains(a.alert().kind()))
                .map(StoredAlert::alert)
                .toList();
        AlertEvaluation evaluation = rules.evaluate(report, List.of(), owned, clock.instant());
        alerts.apply(evaluation);
        if (autoApply != null && leading.getAsBoolean()) {
            autoApply.apply(recommender.recommend(report, frozen(open)), report);
        }
        return true;
    }

    /** Modules whose mass-failure brake is engaged (an open BRAKE_ENGAGED alert). */
    private static Set<ModuleKey> frozen(List<StoredAlert> open) {
        return open.stream()
                .filter(a -> a.alert().kind() == AlertKind.BRAKE_ENGAGED)
                .map(a -> {
                    try {
                        return ModuleKey.parse(a.alert().subject());
                    } catch (RuntimeException e) {
                        return null;
                    }
                })
                .filter(java.util.Objects::nonNull)
                .collect(Collectors.toSet());
    }

    @Override
    public StoredAlert acknowledge(long id, String actor) {
        return acks.acknowledge(id, actor);
    }

    @Override
    public List<StoredAlert> openAlerts() {
        return alerts.open();
    }

    @Override
    public List<StoredAlert> recentAlerts(int limit) {
        return alerts.recent(limit);
    }

    @Override
    public Optional<Recommendations> recommendations() {
        List<StoredAlert> open = alerts.open();
        return reports.latest().map(report -> recommender.recommend(report, frozen(open)));
    }

    @Override
    public void close() {
        ScheduledFuture<?> s = schedule;
        if (s != null) {
            s.cancel(false);
        }
    }
}
