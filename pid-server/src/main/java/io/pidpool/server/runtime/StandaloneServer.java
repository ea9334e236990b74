package io.pidpool.server.runtime;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.config.DatabaseConfig;
import io.pidpool.server.config.EmbeddedWorkerConfig;
import io.pidpool.server.config.HttpConfig;
import io.pidpool.server.config.RedisConfig;
import io.pidpool.server.config.Role;
import io.pidpool.server.config.SecurityConfig;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.config.TokenConfig;
import io.pidpool.server.config.ZooKeeperConfig;
import io.pidpool.server.embedded.EmbeddedRedis;
import io.pidpool.server.embedded.EmbeddedZooKeeper;
import io.pidpool.server.embedded.H2Files;
import io.pidpool.server.embedded.LoopbackPorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The whole system on one machine: an embedded ZooKeeper, an embedded Redis and an H2 file
 * database, all on 127.0.0.1 with their data under one directory, plus a {@link PidServer} that
 * uses them. Started in that order, closed in reverse; {@link #close()} may come from a shutdown
 * hook while {@link #start()} still runs.
 *
 * <p>Data directory layout: {@code zookeeper/}, {@code redis/}, {@code db/}, {@code
 * standalone.lock} (held while running, {@link DataDirLock}) and {@code secret.key} (the AES key that seals PID passwords, generated on first start and kept, owner-only,
 * so the data stays readable across restarts). The admin token is the one given or a new random
 * one per start.
 */
public final class StandaloneServer implements AutoCloseable {
    /** The ZooKeeper tick: sessions may then last 2..20 s. */
    static final int ZK_TICK_MS = 1_000;

    static final int ZK_SESSION_TIMEOUT_MS = 5_000;

    /**
     * What the {@code standalone} command takes. A port of 0 picks a free one.
     *
     * @param adminToken {@code null} to generate one
     */
    public record Options(int httpPort, int zkPort, int redisPort, Path dataDir, String adminToken) {
        public static final int DEFAULT_HTTP_PORT = 8080;
        public static final int DEFAULT_ZK_PORT = 2181;
        public static final int DEFAULT_REDIS_PORT = 6380;
        public static final String DEFAULT_DATA_DIR = "./pidpool-data";

        public Options {
            Objects.requireNonNull(dataDir, "dataDir");
        }
    }

    private final Options options;
    private final Lifecycle lifecycle = new Lifecycle("standalone");
    private final String adminToken;
    private final boolean adminTokenGenerated;
    private final AtomicReference<PidServer> server = new AtomicReference<>();
    private volatile EmbeddedZooKeeper zookeeper;
    private volatile EmbeddedRedis redis;

    public StandaloneServer(Options options) {
        this.options = Objects.requireNonNull(options, "options");
        this.adminTokenGenerated = options.adminToken() == null;
        this.adminToken = adminTokenGenerated ? randomToken() : options.adminToken();
        checkPort(options.httpPort(), "--http-port");
        checkPort(options.zkPort(), "--zk-port");
        checkPort(options.redisPort(), "--redis-port");
        if (adminToken.length() < 16 || adminToken.chars().anyMatch(Character::isWhitespace)) {
            throw PidPoolException.invalid(
                    "--admin-token", "--admin-token must be at least 16 characters without whitespace");
        }
    }

    /** Starts ZooKeeper, Redis and the server; returns when the server answers HTTP. */
    public StandaloneServer start() {
        try {
            Path dir = options.dataDir().toAbsolutePath().normalize();
            Files.createDirectories(dir);
            // first, before any other file in the directory is read or written
            lifecycle.add("data directory lock", DataDirLock.acquire(dir));
            int zkPort = options.zkPort() == 0 ? LoopbackPorts.pickFree() : options.zkPort();
            int redisPort = options.redisPort() == 0 ? LoopbackPorts.pickFree() : options.redisPort();
            if (options.httpPort() != 0) {
                LoopbackPorts.requireFree(options.httpPort(), "--http-port");
            }
            String secretKey = secretKey(dir.resolve("secret.key"));

            lifecycle.requireOpen("ZooKeeper");
            zookeeper = lifecycle.add(
                    "embedded ZooKeeper", EmbeddedZooKeeper.start(dir.resolve("zookeeper"), zkPort, ZK_TICK_MS));
            lifecycle.requireOpen("Redis");
            redis = lifecycle.add("embedded Redis", EmbeddedRedis.start(dir.resolve("redis"), redisPort));
            lifecycle.requireOpen("pid-server");

            ServerConfig config = new ServerConfig(
                    ZkLayout.DEFAULT_CLUSTER,
                    new HttpConfig(LoopbackPorts.LOOPBACK, options.httpPort(), HttpConfig.DEFAULT_MAX_REQUEST_BYTES),
                    new ZooKeeperConfig(zookeeper.connectString(), ZK_SESSION_TIMEOUT_MS, 15_000),
                    new RedisConfig(redis.address(), "", 0, null),
                    new DatabaseConfig(H2Files.url(dir.resolve("db")), "", "", 5),
                    new SecurityConfig(secretKey, List.of(new TokenConfig("admin", adminToken, Role.ADMIN))),
                    new EmbeddedWorkerConfig(true));
            PidServer pidServer = lifecycle.add("pid-server", new PidServer(config));
            server.set(pidServer);
            pidServer.start();
            return this;
        } catch (IOException e) {
            lifecycle.close();
            throw PidPoolException.unavailable("cannot prepare the data directory " + options.dataDir() + ": " + e, e);
        } catch (RuntimeException e) {
            lifecycle.close();
            throw e;
        }
    }

    /**
     * The one line {@code standalone} prints when ready, e.g. {@code PidPool ready:
     * http=http://127.0.0.1:8080 zookeeper=127.0.0.1:2181 redis=redis://127.0.0.1:6380 cluster=default}.
     */
    public String readyLine() {
        PidServer s = requireServer();
        return "PidPool ready: http=http://" + LoopbackPorts.LOOPBACK + ":" + s.httpPort() + " zookeeper="
                + zookeeper.connectString() + " redis=" + redis.address() + " cluster="
                + s.config().cluster();
    }

    public String adminToken() {
        return adminToken;
    }

    public boolean adminTokenGenerated() {
        return adminTokenGenerated;
    }

    public PidServer server() {
        return requireServer();
    }

    public EmbeddedZooKeeper zookeeper() {
        return Objects.requireNonNull(zookeeper, "not started");
    }

    public EmbeddedRedis redis() {
        return Objects.requireNonNull(redis, "not started");
    }

    /** Stops the server, then Redis, then ZooKeeper. Idempotent; safe from a shutdown hook. */
    @Override
    public void close() {
        lifecycle.close();
    }

    private PidServer requireServer() {
        PidServer s = server.get();
        if (s == null) {
            throw PidPoolException.illegalState("standalone is not started");
        }
        return s;
    }

    private static void checkPort(int port, String option) {
        if (port < 0 || port > 65535) {
            throw PidPoolException.invalid(
                    option, "%s must be within 0..65535 (0 picks a free port), was %d", option, port);
        }
    }

    /** Reads the key file, or creates it (owner-only) with a new random 256-bit key. */
    static String secretKey(Path file) throws IOException {
        if (Files.exists(file)) {
            String key = Files.readString(file, StandardCharsets.US_ASCII).trim();
            try {
                SecretSealer.fromSingleKey(key);
            } catch (PidPoolException e) {
                throw PidPoolException.invalid(
                        "--data-dir",
                        "%s is not a base64 AES key; restore it or remove it (sealed data is then lost)",
                        file);
            }
            return key;
        }
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        String key = Base64.getEncoder().encodeToString(bytes);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (UnsupportedOperationException e) {
            Files.createFile(file);
        } catch (FileAlreadyExistsException e) {
            return secretKey(file);
        }
        Files.writeString(file, key + "\n", StandardCharsets.US_ASCII);
        return key;
    }

    private static String randomToken() {
        byte[] bytes = new byte[24];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
