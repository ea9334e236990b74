package io.pidpool.server.runtime;

import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.http.HealthCheck.Component;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.jdbc.DatabaseHealth;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.curator.framework.CuratorFramework;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * The health probes of the server's backends for its {@link HealthMonitor}: ZooKeeper and Redis are
 * asked on every probe round (Redis within {@value #PROBE_TIMEOUT_MS} ms), the database is reported
 * from its own background probe, so it is current on every report. Labels never carry credentials
 * ({@link Backends}).
 */
final class BackendProbes {
    static final long PROBE_TIMEOUT_MS = 2_000;

    private BackendProbes() {}

    /** ZooKeeper (connected, with a session) and Redis (answers a read), in that order. */
    static Map<String, Supplier<Component>> probed(
            ServerConfig config, CuratorFramework curator, RedissonClient redisson) {
        Map<String, Supplier<Component>> probes = new LinkedHashMap<>();
        String zk = config.zookeeper().connect();
        probes.put("zookeeper", () -> {
            var client = curator.getZookeeperClient();
            if (!client.isConnected()) {
                return Component.down("not connected to " + zk);
            }
            int negotiated;
            try {
                negotiated = client.getZooKeeper().getSessionTimeout();
            } catch (Exception e) {
                return Component.down("no session with " + zk + ": " + e.getMessage());
            }
            return Component.up(zk + ", session timeout " + negotiated + " ms");
        });
        String redisLabel = Backends.redisLabel(config.redis());
        String key = "pidpool:" + config.cluster() + ":health";
        probes.put("redis", () -> {
            try {
                redisson.getBucket(key, StringCodec.INSTANCE)
                        .isExistsAsync()
                        .toCompletableFuture()
                        .get(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                return Component.up(redisLabel);
            } catch (TimeoutException e) {
                return Component.down(redisLabel + ": no answer within " + PROBE_TIMEOUT_MS + " ms");
            } catch (ExecutionException e) {
                return Component.down(redisLabel + ": " + Backends.rootMessage(e));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Component.down(redisLabel + ": interrupted");
            }
        });
        return probes;
    }

    /** The database's state from its own background probe (every 250 ms): current on every report. */
    static Map<String, Supplier<Component>> live(ServerConfig config, Database database) {
        String db = Backends.redactUrl(config.database().url());
        return Map.of("database", () -> {
            var status = database.health().status();
            return status.state() == DatabaseHealth.State.UP
                    ? Component.up(db)
                    : Component.down(db + ": " + status.detail());
        });
    }
}
