package io.pidpool.server.runtime;

import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.config.DatabaseConfig;
import io.pidpool.server.config.RedisConfig;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.jdbc.JdbcSettings;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Opens the server's clients of its three backends, ZooKeeper, the database and Redis, each failing
 * fast with {@code UNAVAILABLE} that names the config key pointing at the backend that cannot be
 * reached; and names each backend in messages without its credentials.
 */
final class Backends {
    private Backends() {}

    /** A started Curator client in the cluster's namespace, connected within {@code connectionTimeoutMs}. */
    static CuratorFramework curator(ServerConfig config, ZkAuth zkAuth) {
        var zk = config.zookeeper();
        String namespace = new ZkLayout(config.cluster()).namespace();
        CuratorFramework client = zkAuth.configure(
                        CuratorFrameworkFactory.builder()
                                .connectString(zk.connect())
                                .sessionTimeoutMs(zk.sessionTimeoutMs())
                                // Curator warns when its connection timeout exceeds the session
                                // timeout; the start-up wait below uses connectionTimeoutMs in full
                                .connectionTimeoutMs(Math.min(zk.connectionTimeoutMs(), zk.sessionTimeoutMs()))
                                .retryPolicy(new ExponentialBackoffRetry(100, 10, 5_000))
                                .namespace(namespace),
                        namespace)
                .build();
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected(zk.connectionTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            client.close();
            throw PidPoolException.unavailable("interrupted while connecting to ZooKeeper", e);
        }
        if (!connected) {
            client.close();
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE,
                    "zookeeper.connect",
                    "ZooKeeper at " + zk.connect() + " is not reachable within " + zk.connectionTimeoutMs()
                            + " ms (zookeeper.connect)");
        }
        return client;
    }

    /** Opens the pool and migrates the schema ({@link Database#open}); UNAVAILABLE names the url. */
    static Database database(DatabaseConfig db) {
        try {
            return Database.open(new JdbcSettings(
                    db.url(),
                    db.user().isEmpty() ? null : db.user(),
                    db.password().isEmpty() ? null : db.password(),
                    db.maxPoolSize(),
                    JdbcSettings.DEFAULT_CONNECTION_TIMEOUT));
        } catch (PidPoolException e) {
            throw new PidPoolException(e.code(), "database.url", e.getMessage() + " (database.url)", e);
        }
    }

    /** A Redisson client of {@code redis.address} or the {@code redis.redisson} block, with string codec. */
    static RedissonClient redisson(RedisConfig redis) {
        Config config;
        if (redis.usesRedissonBlock()) {
            try {
                config = Config.fromYAML(new YAMLMapper().writeValueAsString(redis.redisson()));
            } catch (IOException e) {
                throw PidPoolException.invalid("redis.redisson", "not a valid Redisson configuration");
            }
        } else {
            config = new Config();
            var single = config.useSingleServer()
                    .setAddress(redis.address())
                    .setDatabase(redis.database())
                    .setConnectionMinimumIdleSize(2)
                    .setSubscriptionConnectionMinimumIdleSize(1);
            if (!redis.password().isEmpty()) {
                single.setPassword(redis.password());
            }
        }
        // strings, not Redisson's default Kryo: scripts and redis-cli can read what PidPool writes
        config.setCodec(StringCodec.INSTANCE);
        try {
            return Redisson.create(config);
        } catch (RuntimeException e) {
            String key = redis.usesRedissonBlock() ? "redis.redisson" : "redis.address";
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE,
                    key,
                    "Redis at " + redisLabel(redis) + " is not reachable (" + key + "): " + rootMessage(e),
                    e);
        }
    }

    /** Drops everything after '?' or ';' (where credentials may hide) and any user:password@. */
    static String redactUrl(String jdbcUrl) {
        String url = jdbcUrl;
        int cut = indexOfAny(url, '?', ';');
        if (cut >= 0) {
            url = url.substring(0, cut);
        }
        return url.replaceAll("//[^/@]*@", "//");
    }

    /** The Redis address without user:password@, or a mere mention of the Redisson block. */
    static String redisLabel(RedisConfig redis) {
        return redis.usesRedissonBlock()
                ? "(redis.redisson block)"
                : redis.address().replaceAll("//[^/@]*@", "//");
    }

    /** The innermost cause's class and message: what a backend client actually ran into. */
    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    }

    private static int indexOfAny(String s, char a, char b) {
        int i = s.indexOf(a);
        int j = s.indexOf(b);
        return i < 0 ? j : (j < 0 ? i : Math.min(i, j));
    }
}
