package io.pidpool.server.runtime;

import io.pidpool.client.quota.QuotaKeys;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.usage.UsageSyncService;
import io.pidpool.worker.task.JdbiTaskStore;
import java.time.Clock;
import java.time.Duration;
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
            ServerConfig config, RedissonClient redisson, Database database, Clock clock, String group) {
        return new UsageSyncService(
                redisson,
                keys(config),
                database.repositories(clock).usage(),
                JdbiTaskStore.create(database.dataSource()),
                group,
                clock,
                Duration.ofMillis(config.monitoring().syncIntervalMs()));
    }
}
