package io.pidpool.client.internal.quota.testing;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.redisson.config.ConstantDelay;

/**
 * Redis for the quota ITs.
 *
 * <ul>
 *   <li>{@link #sharedUrl()}: {@code PIDPOOL_TEST_REDIS_URL} if set; else {@code 127.0.0.1:6379} if a
 *       server answers there; else a {@link RedisProcess} started once for this JVM.
 *   <li>Isolation: each test uses a random cluster name ({@link #randomCluster()}), so its keys never
 *       meet another test's (other test JVMs share the server), and drops them ({@link #drop}).
 *   <li>Tests that kill, restart, flush or disconnect Redis start their own {@link RedisProcess}.
 * </ul>
 */
public final class RedisSupport {
    public static final String ENV = "PIDPOOL_TEST_REDIS_URL";

    private static String shared;
    private static RedisProcess sharedProcess;

    static {
        // without a logback-test.xml logback logs DEBUG: Netty and Redisson would log every command
        quiet("io.netty");
        quiet("org.redisson");
    }

    private static void quiet(String logger) {
        if (org.slf4j.LoggerFactory.getLogger(logger) instanceof ch.qos.logback.classic.Logger l
                && l.getLevel() == null) {
            l.setLevel(ch.qos.logback.classic.Level.INFO);
        }
    }

    private RedisSupport() {}

    public static synchronized String sharedUrl() {
        if (shared != null) {
            return shared;
        }
        String env = System.getenv(ENV);
        if (env != null && !env.isBlank()) {
            shared = env.trim();
        } else if ("+PONG".equals(RedisProcess.command(6379, "PING"))) {
            shared = "redis://127.0.0.1:6379";
        } else {
            sharedProcess = RedisProcess.start(false);
            Runtime.getRuntime().addShutdownHook(new Thread(sharedProcess::close, "redis-test-shutdown"));
            shared = sharedProcess.url();
        }
        return shared;
    }

    /** The port of a {@code redis://host:port} URL. */
    public static int port(String url) {
        return URI.create(url).getPort();
    }

    /** A Redisson client with short timeouts, quick reconnects, few threads and {@link StringCodec}. */
    public static RedissonClient client(String url) {
        return client(url, c -> {});
    }

    public static RedissonClient client(String url, Consumer<Config> tune) {
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE);
        config.setThreads(2);
        config.setNettyThreads(4);
        config.useSingleServer()
                .setAddress(url)
                .setClientName("pidpool-test-" + UUID.randomUUID().toString().substring(0, 8))
                .setConnectTimeout(2000)
                .setTimeout(2000)
                .setRetryAttempts(2)
                .setRetryDelay(new ConstantDelay(Duration.ofMillis(200)))
                .setReconnectionDelay(new ConstantDelay(Duration.ofMillis(100)))
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(16)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(4)
                .setPingConnectionInterval(1000);
        tune.accept(config);
        return Redisson.create(config);
    }

    /** A Redisson client for a Redis Cluster, with the same short timeouts and {@link StringCodec}. */
    public static RedissonClient clusterClient(List<String> urls) {
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE);
        config.setThreads(2);
        config.setNettyThreads(6);
        config.useClusterServers()
                .addNodeAddress(urls.toArray(String[]::new))
                .setClientName("pidpool-test-" + UUID.randomUUID().toString().substring(0, 8))
                .setScanInterval(1000)
                .setConnectTimeout(2000)
                .setTimeout(2000)
                .setRetryAttempts(2)
                .setRetryDelay(new ConstantDelay(Duration.ofMillis(200)))
                .setReconnectionDelay(new ConstantDelay(Duration.ofMillis(100)))
                .setMasterConnectionMinimumIdleSize(2)
                .setMasterConnectionPoolSize(16)
                .setSubscriptionConnectionMinimumIdleSize(1)
                .setSubscriptionConnectionPoolSize(4)
                .setPingConnectionInterval(1000);
        return Redisson.create(config);
    }

    /** The connection name Redisson uses for {@code client} (see {@link #killConnections}). */
    public static String clientName(RedissonClient client) {
        return client.getConfig().useSingleServer().getClientName();
    }

    /** A cluster name no other test uses. */
    public static String randomCluster() {
        return "t" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** A ledger builder on {@code client} for {@code cluster}, with the tests' defaults. */
    public static RedissonQuotaLedger.Builder ledger(RedissonClient client, String cluster, String clientId) {
        return RedissonQuotaLedger.builder()
                .redisson(client)
                .cluster(cluster)
                .shards(4)
                .clientId(clientId);
    }

    /** Deletes every key of {@code keys}' cluster. */
    public static long drop(RedissonClient client, QuotaKeys keys) {
        return client.getKeys().deleteByPattern(keys.allKeysPattern());
    }

    /**
     * Closes every connection named {@code name} (a Redisson client's connections, data and pub/sub)
     * with {@code CLIENT KILL ID}; returns how many were killed.
     */
    public static int killConnections(int port, String name) {
        String list = RedisProcess.command(port, "CLIENT", "LIST");
        if (list == null) {
            return 0;
        }
        List<String> ids = new ArrayList<>();
        for (String line : list.split("\n")) {
            if (line.contains(" name=" + name + " ")) {
                for (String field : line.split(" ")) {
                    if (field.startsWith("id=")) {
                        ids.add(field.substring(3));
                    }
                }
            }
        }
        int killed = 0;
        for (String id : ids) {
            if (":1".equals(RedisProcess.command(port, "CLIENT", "KILL", "ID", id))) {
                killed++;
            }
        }
        return killed;
    }
}
