package io.pidpool.client.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

/**
 * A real single ZooKeeper server for tests, bound to 127.0.0.1 only (curator-test listens on
 * 0.0.0.0 by default), with a 100 ms tick so that clients may negotiate session timeouts from
 * 100 ms up to 60 s.
 */
public final class TestZooKeeper {
    public static final int TICK_MS = 100;

    private TestZooKeeper() {}

    public static TestingServer start() {
        try {
            // the embedded server writes into java.io.tmpdir, which the build points into target/
            Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir")));
            InstanceSpec spec = new InstanceSpec(
                    null,
                    -1,
                    -1,
                    -1,
                    true,
                    -1,
                    TICK_MS,
                    -1,
                    Map.of("clientPortAddress", "127.0.0.1", "maxSessionTimeout", "60000"),
                    "127.0.0.1");
            return new TestingServer(spec, true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new IllegalStateException("cannot start the test ZooKeeper", e);
        }
    }
}
