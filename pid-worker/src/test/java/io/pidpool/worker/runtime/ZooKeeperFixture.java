package io.pidpool.worker.runtime;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real ZooKeeper (curator-test) bound to 127.0.0.1, and clients with a short session.
 *
 * <p>The server runs with {@link #TICK_TIME_MS} = 100 ms ({@code -Dzk.tickTime=...} to compare). ZooKeeper expires sessions in buckets of
 * one tick (its {@code ExpiryQueue} rounds each session's deadline up to the next tick), so a dead
 * session's ephemeral nodes go between T and T + one tick after its last request. curator-test's
 * default tick is {@code Timing2.tickTime()} = 10 % of 10 s = <b>1,000 ms</b> (and minSessionTimeout =
 * tick), which let a 2 s session's nodes linger up to 1 s longer. minSessionTimeout and
 * maxSessionTimeout are set explicitly (ZooKeeper's defaults, 2 and 20 ticks, would cap a session
 * at 2 s with this tick).
 */
final class ZooKeeperFixture implements AutoCloseable {
    static final int SESSION_TIMEOUT_MS = 2000;
    static final int TICK_TIME_MS = Integer.getInteger("zk.tickTime", 100);
    static final int MIN_SESSION_TIMEOUT_MS = 2 * TICK_TIME_MS;
    static final int MAX_SESSION_TIMEOUT_MS = 60_000;

    private final TestingServer server;

    ZooKeeperFixture() throws Exception {
        // the embedded server writes config files into java.io.tmpdir (target/tmp under failsafe)
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        InstanceSpec spec = new InstanceSpec(
                null,
                -1,
                -1,
                -1,
                true,
                -1,
                TICK_TIME_MS,
                -1,
                Map.of(
                        "clientPortAddress", "127.0.0.1",
                        "minSessionTimeout", String.valueOf(MIN_SESSION_TIMEOUT_MS),
                        "maxSessionTimeout", String.valueOf(MAX_SESSION_TIMEOUT_MS)),
                "127.0.0.1");
        server = new TestingServer(spec, true);
    }

    /**
     * The running server's own tickTime and session bounds, read from its JMX bean (the values it
     * actually uses, not the ones requested above); "unknown" if the bean is not registered.
     */
    String serverSettings() {
        try {
            MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
            for (ObjectName name : mbeans.queryNames(new ObjectName("org.apache.ZooKeeperService:*"), null)) {
                if (!name.getKeyPropertyListString().contains(String.valueOf(port()))
                        || name.getKeyPropertyList().size() != 1) {
                    continue;
                }
                return "tickTime=" + mbeans.getAttribute(name, "TickTime") + "ms minSessionTimeout="
                        + mbeans.getAttribute(name, "MinSessionTimeout") + "ms maxSessionTimeout="
                        + mbeans.getAttribute(name, "MaxSessionTimeout") + "ms";
            }
            return "unknown (no ZooKeeperService bean for port " + port() + ")";
        } catch (Exception e) {
            return "unknown (" + e + ")";
        }
    }

    int port() {
        return server.getPort();
    }

    String connectString() {
        return "127.0.0.1:" + server.getPort();
    }

    /** A started client to {@code 127.0.0.1:port} (the server, or a proxy in front of it). */
    CuratorFramework client(int port) throws InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString("127.0.0.1:" + port)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS)
                .connectionTimeoutMs(SESSION_TIMEOUT_MS)
                .retryPolicy(new ExponentialBackoffRetry(100, 10, 1000))
                .build();
        c.start();
        if (!c.blockUntilConnected(10, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("no ZooKeeper connection through port " + port);
        }
        return c;
    }

    /** The session timeout the server granted to {@code client} (it may differ from the request). */
    static int negotiatedTimeoutMs(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionTimeout();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
