package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.AlertRules;
import io.pidpool.core.advice.Recommender;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.port.AlertStore;
import io.pidpool.core.port.Repositories;
import io.pidpool.server.config.AdviceConfig;
import io.pidpool.server.leader.AlertSink;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.leader.PlacementPolicy;
import io.pidpool.server.leader.PlannerPlacement;
import io.pidpool.server.usage.UsageReports;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskSchema;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.LongSupplier;
import javax.sql.DataSource;

/**
 * Wires monitoring and advice into one pid-server from {@link AdviceConfig} ({@code docs/alerts.md}):
 * the {@link AlertService} (whose {@link #leaderSink()} replaces the leader's logging sink), the
 * webhook's tasks, the leader's cooldown and brake thresholds, and the {@link AdviceMonitor} that
 * also answers the HTTP routes. Built before the coordination node, monitor started after it.
 */
public final class AdviceSetup implements AutoCloseable {
    /** How far back departures count for the mass-failure brake (the planner's default). */
    static final Duration BRAKE_WINDOW = Duration.ofMinutes(1);

    private final AdviceConfig config;
    private final Clock clock;
    private final LongSupplier ids;
    private final WebhookTasks webhook; // null: none
    private final AlertService alerts;
    private final AlertStore store;
    private volatile AdviceMonitor monitor;

    /**
     * @param tasks the database holding pid-worker's task table (its schema is migrated here when a
     *     webhook is configured)
     */
    public AdviceSetup(
            AdviceConfig config,
            String cluster,
            AlertStore store,
            DataSource tasks,
            String workerGroup,
            LongSupplier ids,
            Clock clock) {
        this.config = requireNonNull(config, "config");
        this.clock = requireNonNull(clock, "clock");
        this.ids = requireNonNull(ids, "ids");
        if (config.webhook().url().isEmpty()) {
            this.webhook = null;
        } else {
            TaskSchema.migrate(tasks);
            this.webhook = new WebhookTasks(
                    JdbiTaskStore.create(tasks),
                    workerGroup,
                    cluster,
                    URI.create(config.webhook().url()),
                    config.webhook().maxAttempts(),
                    Duration.ofMillis(config.webhook().timeoutMs()),
                    clock);
        }
        this.store = requireNonNull(store, "store");
        this.alerts = new AlertService(store, ids, clock, webhook == null ? AlertNotifier.none() : webhook.notifier());
    }

    public AlertService alerts() {
        return alerts;
    }

    /** For {@code ClusterMemberBuilder.alerts}: logs, stores and announces what the leader reports. */
    public AlertSink leaderSink() {
        return alerts.leaderSink();
    }

    /** {@code base} with the configured cooldown threshold and duration and the default rebalance delay. */
    public LeaderSettings leaderSettings(LeaderSettings base) {
        return base.withFailurePolicy(
                        base.ackTimeout(), config.cooldownAfterFailures(), base.retryBackoff(), config.cooldown())
                .withRebalanceDelay(config.rebalanceDelay());
    }

    /** The planner with the configured mass-failure share, for {@code ClusterMemberBuilder.placement}. */
    public Function<Duration, PlacementPolicy> placement(LeaderSettings settings) {
        double share = config.massFailureShare();
        return grace -> new PlannerPlacement(PlannerPolicy.defaults(grace)
                .withRebalanceDelay(settings.rebalanceDelay())
                .withBrake(share, BRAKE_WINDOW));
    }

    /** Adds the webhook's task handler (when a webhook is configured). */
    public void registerHandlers(Map<String, TaskHandler> handlers) {
        if (webhook != null) {
            handlers.put(WebhookTasks.TYPE, webhook.handler());
        }
    }

    /** Starts the monitoring rounds on {@code node}'s leadership; the monitor also serves the HTTP routes. */
    public AdviceMonitor startMonitor(ClusterMember node, Repositories repos, UsageReports reports) {
        var auto = config.autoApply();
        AutoApplier applier = auto.enabled()
                ? new AutoApplier(
                        node.batches(),
                        repos,
                        ids,
                        clock,
                        auto.maxMovesPerInterval(),
                        Duration.ofMillis(auto.intervalMs()),
                        auto.onEstimatedUsage())
                : null;
        monitor = new AdviceMonitor(
                        node::isLeader,
                        reports,
                        alerts,
                        new AlertRules(config.alertPolicy()),
                        new Recommender(config.recommenderPolicy()),
                        applier,
                        new AlertAcks(store, repos, ids, clock),
                        clock)
                .start(config.evaluateInterval());
        return monitor;
    }

    @Override
    public void close() {
        AdviceMonitor m = monitor;
        if (m != null) {
            m.close();
        }
        alerts.close();
    }
}
