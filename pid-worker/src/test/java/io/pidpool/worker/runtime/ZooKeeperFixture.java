package io.pidpool.worker.runtime;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** A real ZooKeeper (curator-test) bound to 127.0.0.1, and clients with a short session. */
final class ZooKeeperFixture implements AutoCloseable {
    static final int SESSION_TIMEOUT_MS = 2000;

    private final TestingServer server;

    ZooKeeperFixture() throws Exception {
        // the embedded server writes config files into java.io.tmpdir (target/tmp under failsafe)
        Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
        InstanceSpec spec = new InstanceSpec(
                null, -1, -1, -1, true, -1, -1, -1, Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        server = new TestingServer(spec, true);
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
