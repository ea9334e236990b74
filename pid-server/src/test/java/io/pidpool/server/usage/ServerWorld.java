package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.ItSupport;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.embedded.EmbeddedZooKeeper;
import io.pidpool.server.runtime.PidServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RedissonClient;

/**
 * A real pid-server world for the usage ITs: an embedded ZooKeeper on its own port, the shared Redis
 * ({@link RedisSupport#sharedUrl()}) under a random cluster name (dropped at close), an H2 database
 * in memory per server, and any number of {@link PidServer}s and {@link PidClient}s.
 */
final class ServerWorld implements AutoCloseable {
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String ADMIN = "it-admin-token-0123456789";
    static final String VIEWER = "it-viewer-token-0123456789";
    static final Duration WAIT = Duration.ofSeconds(60);

    final String cluster = RedisSupport.randomCluster();
    final String redisUrl = RedisSupport.sharedUrl();
    final String database = "usage_" + UUID.randomUUID().toString().replace("-", "");
    final EmbeddedZooKeeper zk;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    ServerWorld(Path dir) {
        ItSupport.tmpdir();
        zk = EmbeddedZooKeeper.start(dir.resolve("zk-" + cluster), ItSupport.freePorts(1)[0], 1000);
    }

    /** server.yml of one server; {@code extra} (top-level YAML, e.g. a monitoring block) is appended. */
    String yaml(String extra, boolean metricsRequireToken) {
        return """
                cluster: %s
                http: { host: 127.0.0.1, port: 0, metricsRequireToken: %b }
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000, connectionTimeoutMs: 10000 }
                redis: { address: "%s" }
                database: { url: "jdbc:h2:mem:%s;DB_CLOSE_DELAY=-1" }
                security:
                  secretKey: "%s"
                  tokens:
                    - { name: ops, token: "%s", role: admin }
                    - { name: dashboard, token: "%s", role: viewer }
                worker: { enabled: true }
                %s
                """
                .formatted(
                        cluster,
                        metricsRequireToken,
                        zk.connectString(),
                        redisUrl,
                        database,
                        KEY,
                        ADMIN,
                        VIEWER,
                        extra);
    }

    PidServer startServer(String extra) {
        return startServer(extra, "s" + closeables.size());
    }

    PidServer startServer(String extra, String nodeId) {
        return startServer(extra, nodeId, false);
    }

    /** Servers of one world share the database (one H2 in memory by name) and Redis. */
    PidServer startServer(String extra, String nodeId, boolean metricsRequireToken) {
        ServerConfig config = new ConfigLoader(Map.of()).load(yaml(extra, metricsRequireToken), "server.yml");
        PidServer server = new PidServer(config, nodeId).start();
        closeables.add(server);
        return server;
    }

    PidClient startClient(String module, String instance, PidListener listener) {
        PidClient client = PidClient.builder()
                .connectString(zk.connectString())
                .cluster(cluster)
                .module(module)
                .instanceId(instance)
                .host("test-host")
                .secretKey(KEY)
                .redisAddress(redisUrl)
                .sessionTimeout(Duration.ofSeconds(4))
                .listener(listener)
                .build();
        closeables.add(client);
        client.start();
        return client;
    }

    static PidListener quietListener() {
        return new PidListener() {
            @Override
            public void onAssigned(PidAccount account) {}

            @Override
            public void onRevoked(PidAccount account) {}
        };
    }

    @SafeVarargs
    static BatchRecord apply(PidServer server, Operation<String>... ops) throws Exception {
        BatchId id = server.node().batches().submit(List.of(ops), "it");
        BatchRecord done = server.node().batches().await(id, WAIT).get(WAIT.toSeconds() + 5, TimeUnit.SECONDS);
        assertThat(done.status()).as("%s", done.results()).isEqualTo(BatchStatus.DEALED);
        return done;
    }

    static void awaitLeader(PidServer server) {
        await().atMost(WAIT).until(() -> server.node().isLeader());
    }

    QuotaKeys keys() {
        return new QuotaKeys(cluster, QuotaKeys.DEFAULT_SHARDS);
    }

    @Override
    public void close() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                // keep closing the rest
            }
        }
        RedissonClient redis = RedisSupport.client(redisUrl);
        try {
            RedisSupport.drop(redis, keys());
        } finally {
            redis.shutdown();
        }
        zk.close();
    }
}
