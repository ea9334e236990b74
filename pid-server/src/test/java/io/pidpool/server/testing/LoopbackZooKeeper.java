package io.pidpool.server.testing;

import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/** A curator-test ZooKeeper server bound to 127.0.0.1 (TestingServer listens on 0.0.0.0 by default). */
public final class LoopbackZooKeeper implements AutoCloseable {
    /** Ticks of 200 ms: sessions may be negotiated between 0.4 s and 4 s. */
    public static final int TICK_MILLIS = 200;

    private final TestingServer server;

    public LoopbackZooKeeper() {
        try {
            // failsafe points java.io.tmpdir into target/: ZooKeeper leaves files there
            java.nio.file.Files.createDirectories(java.nio.file.Path.of(System.getProperty("java.io.tmpdir")));
            InstanceSpec spec = new InstanceSpec(
                    null, -1, -1, -1, true, -1, TICK_MILLIS, -1, Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
            server = new TestingServer(spec, true);
        } catch (Exception e) {
            throw new IllegalStateException("could not start ZooKeeper", e);
        }
    }

    public String connectString() {
        return server.getConnectString();
    }

    @Override
    public void close() throws java.io.IOException {
        server.close();
    }
}
