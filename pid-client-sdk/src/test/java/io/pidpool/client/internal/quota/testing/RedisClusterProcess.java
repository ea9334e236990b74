package io.pidpool.client.internal.quota.testing;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A three-master Redis Cluster of a test's own on free loopback ports (no replicas): slots split in
 * three ranges, nodes joined with {@code CLUSTER MEET}, ready when every node reports
 * {@code cluster_state:ok}. Needs a redis-server with cluster support (any since 3.0).
 */
public final class RedisClusterProcess implements AutoCloseable {
    private static final int SLOTS = 16384;
    private final List<RedisProcess> nodes = new ArrayList<>();

    public static RedisClusterProcess start() {
        RedisClusterProcess cluster = new RedisClusterProcess();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.nodes.add(RedisProcess.start(
                        false,
                        RedisProcess.binary(),
                        List.of(
                                "--cluster-enabled", "yes",
                                "--cluster-config-file", "nodes.conf",
                                "--cluster-node-timeout", "5000")));
            }
            for (int i = 0; i < 3; i++) {
                int from = i * SLOTS / 3;
                int to = (i + 1) * SLOTS / 3 - 1;
                List<String> cmd = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
                for (int slot = from; slot <= to; slot++) {
                    cmd.add(Integer.toString(slot));
                }
                require(RedisProcess.command(cluster.nodes.get(i).port(), cmd.toArray(String[]::new)));
            }
            int first = cluster.nodes.get(0).port();
            for (int i = 1; i < 3; i++) {
                require(RedisProcess.command(
                        first,
                        "CLUSTER",
                        "MEET",
                        "127.0.0.1",
                        Integer.toString(cluster.nodes.get(i).port())));
            }
            await("a healthy 3-node cluster")
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> cluster.nodes.stream().allMatch(n -> {
                        String info = RedisProcess.command(n.port(), "CLUSTER", "INFO");
                        return info != null
                                && info.contains("cluster_state:ok")
                                && info.contains("cluster_known_nodes:3");
                    }));
            return cluster;
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
    }

    private static void require(String reply) {
        if (!"+OK".equals(reply)) {
            throw new IllegalStateException("cluster setup failed: " + reply);
        }
    }

    public List<String> urls() {
        return nodes.stream().map(RedisProcess::url).toList();
    }

    public List<RedisProcess> nodes() {
        return nodes;
    }

    @Override
    public void close() {
        nodes.forEach(RedisProcess::close);
    }
}
