package io.pidpool.server.embedded;

import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeoutException;
import org.apache.zookeeper.server.embedded.ExitHandler;
import org.apache.zookeeper.server.embedded.ZooKeeperServerEmbedded;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single ZooKeeper server in this JVM, on 127.0.0.1, with its data under one directory
 * ({@code <dir>/data}); ZooKeeper's own {@link ZooKeeperServerEmbedded}, not curator-test.
 *
 * <p>Sharp edges handled here: the embedded server writes a fresh {@code
 * zookeeper.configuration*.properties} into its base directory at every boot (deleted after it is
 * parsed); its Jetty admin server would take port 8080 (disabled); it calls {@code System.exit}
 * when the server thread dies unless told to only log (we tell it); and a taken port makes it hang
 * instead of failing (checked beforehand, and start-up is bounded by a timeout).
 */
public final class EmbeddedZooKeeper implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EmbeddedZooKeeper.class);
    private static final long START_TIMEOUT_MS = 20_000;

    private final ZooKeeperServerEmbedded server;
    private final int port;

    private EmbeddedZooKeeper(ZooKeeperServerEmbedded server, int port) {
        this.server = server;
        this.port = port;
    }

    /**
     * Starts ZooKeeper on 127.0.0.1:{@code port} with data under {@code dir}.
     *
     * @param tickTimeMs ZooKeeper's tick: sessions may last 2..20 ticks
     */
    public static EmbeddedZooKeeper start(Path dir, int port, int tickTimeMs) {
        LoopbackPorts.requireFree(port, "--zk-port");
        Properties p = new Properties();
        p.setProperty("clientPort", Integer.toString(port));
        p.setProperty("clientPortAddress", LoopbackPorts.LOOPBACK);
        p.setProperty("dataDir", dir.resolve("data").toAbsolutePath().toString());
        p.setProperty("tickTime", Integer.toString(tickTimeMs));
        // every SDK client of a one-machine setup comes from 127.0.0.1: no per-address limit
        p.setProperty("maxClientCnxns", "0");
        p.setProperty("maxCnxns", "0");
        p.setProperty("admin.enableServer", "false");
        p.setProperty("autopurge.snapRetainCount", "3");
        p.setProperty("autopurge.purgeInterval", "1");
        ZooKeeperServerEmbedded server;
        try {
            Files.createDirectories(dir);
            server = ZooKeeperServerEmbedded.builder()
                    .baseDir(dir)
                    .configuration(p)
                    .exitHandler(ExitHandler.LOG_ONLY)
                    .build();
        } catch (Exception e) {
            throw PidPoolException.unavailable("cannot configure embedded ZooKeeper in " + dir + ": " + e, e);
        }
        deleteGeneratedConfigFiles(dir);
        try {
            server.start(START_TIMEOUT_MS);
        } catch (TimeoutException e) {
            server.close();
            throw PidPoolException.unavailable(
                    "embedded ZooKeeper did not start within " + START_TIMEOUT_MS + " ms on port " + port, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.close();
            throw PidPoolException.unavailable("interrupted while starting embedded ZooKeeper", e);
        } catch (Exception e) {
            server.close();
            throw PidPoolException.unavailable("embedded ZooKeeper failed to start: " + e, e);
        }
        log.info("embedded ZooKeeper listening on {}:{} (data in {})", LoopbackPorts.LOOPBACK, port, dir);
        return new EmbeddedZooKeeper(server, port);
    }

    /** {@code 127.0.0.1:<port>}. */
    public String connectString() {
        return LoopbackPorts.LOOPBACK + ":" + port;
    }

    public int port() {
        return port;
    }

    @Override
    public void close() {
        server.close();
        log.info("embedded ZooKeeper on port {} stopped", port);
    }

    private static void deleteGeneratedConfigFiles(Path dir) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "zookeeper.configuration*.properties")) {
            for (Path file : files) {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            log.debug("could not delete ZooKeeper's generated configuration files in {}", dir, e);
        }
    }
}
