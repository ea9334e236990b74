package io.pidpool.server.runtime;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.http.UsageRoutes;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.redis.RedisUsageReader;
import io.pidpool.server.usage.UsageMetrics;
import io.pidpool.server.usage.UsageMonitor;
import io.pidpool.server.usage.UsageSyncService;
import io.pidpool.worker.task.JdbiTaskStore;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.function.Consumer;
import org.redisson.api.RedissonClient;

/** Builds the usage parts of a {@link PidServer} from its configuration (kept out of the server class). */
final class UsageWiring {
    private UsageWiring() {}

    /** The quota key layout of the cluster: its name and the SDK's shard count. */
    static QuotaKeys keys(ServerConfig config) {
        return new QuotaKeys(config.cluster(), QuotaKeys.DEFAULT_SHARDS);
    }

    /** The ledger sync over the server's Redis client, database and worker group (not started). */
    static UsageSyncService sync(
            ServerConfig config,
            RedissonClient redisson,
            Database database,
            Clock clock,
            String group,
            Consumer<Alert> alerts) {
        return new UsageSyncService(
                redisson,
                keys(config),
                database.repositories(clock).usage(),
                JdbiTaskStore.create(database.dataSource()),
                group,
                clock,
                Duration.ofMillis(config.monitoring().syncIntervalMs()),
                alerts);
    }

    /**
     * The leader's periodic usage scan (started: first scan soon after start-up, then every
     * {@code monitoring.scanIntervalMs}); the quota month is UTC, as the SDK's. A module's usage is
     * exact (not estimated) while no PID moved in or out of it this month ({@code database}'s operation
     * log), which lets {@code advice.autoApply} act on it.
     */
    static UsageMonitor monitor(
            ServerConfig config, RedissonClient redisson, ClusterMember node, Database database, Clock clock) {
        Duration interval = Duration.ofMillis(config.monitoring().scanIntervalMs());
        return new UsageMonitor(
                        new NodeUsageFacts(node, database.moduleMoves()),
                        new RedisUsageReader(redisson, keys(config)),
                        new MonthlyWindow(ZoneOffset.UTC),
                        config.advice().overageTariff(),
                        UsageProjector.blended(),
                        clock,
                        interval)
                .start(interval.compareTo(Duration.ofSeconds(1)) < 0 ? interval : Duration.ofSeconds(1));
    }

    /** {@code /metrics} and {@code /api/v1/usage}; {@code sync} may be null (worker disabled). */
    static UsageRoutes routes(
            io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry,
            UsageMonitor usage,
            UsageSyncService sync,
            ClusterMember node) {
        return new UsageRoutes(usage, new UsageMetrics(registry, usage, new NodeUsageFacts(node), usage, sync));
    }
}
