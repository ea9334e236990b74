package io.pidpool.it.security;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.runtime.PidServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.redisson.Redisson;
import org.redisson.api.RKeys;
import org.redisson.api.RType;
import org.redisson.api.RedissonClient;
import org.redisson.api.StreamMessageId;
import org.redisson.api.stream.StreamRangeArgs;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.slf4j.LoggerFactory;

/**
 * Test helpers of the security scenarios: random keys and tokens, a pid-server built from YAML,
 * HTTP calls, a log file capturing every event of the JVM, and dumps of everything stored in
 * ZooKeeper, Redis and the database, each fed to a {@link CanaryScanner}-style consumer.
 */
final class SecurityWorld {
    static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final SecureRandom RANDOM = new SecureRandom();

    private SecurityWorld() {}

    static String randomKey() {
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    static PidServer startServer(String yaml) {
        ServerConfig config = new ConfigLoader(Map.of()).load(yaml, "server.yml");
        return new PidServer(config).start();
    }

    static HttpResponse<String> send(String method, String url, String token, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
            b.method(method, HttpRequest.BodyPublishers.ofString(body));
        } else {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        }
        try {
            return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A real redis-server with {@code requirepass} (set at run time: the start probe pings without AUTH). */
    static RedisProcess redisWithPassword(String password) {
        RedisProcess redis = RedisProcess.start(false);
        String ok = RedisProcess.command(redis.port(), "CONFIG", "SET", "requirepass", password);
        if (!"+OK".equals(ok)) {
            redis.close();
            throw new IllegalStateException("CONFIG SET requirepass answered " + ok);
        }
        return redis;
    }

    static CuratorFramework curator(TestingServer zk, String digestOrNull) {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(zk.getConnectString())
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(10_000)
                .retryPolicy(new RetryOneTime(100));
        if (digestOrNull != null) {
            b.authorization("digest", digestOrNull.getBytes(StandardCharsets.UTF_8));
        }
        CuratorFramework c = b.build();
        c.start();
        try {
            if (!c.blockUntilConnected(20, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("no ZooKeeper connection");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return c;
    }

    /** Every node below {@code root} (inclusive) with its data: path → data. */
    static Map<String, byte[]> zkDump(CuratorFramework client, String root) throws Exception {
        Map<String, byte[]> out = new LinkedHashMap<>();
        List<String> todo = new ArrayList<>(List.of(root));
        while (!todo.isEmpty()) {
            String path = todo.remove(todo.size() - 1);
            if (path.equals("/zookeeper") || path.startsWith("/zookeeper/")) {
                continue;
            }
            byte[] data;
            List<String> children;
            try {
                data = client.getData().forPath(path);
                children = client.getChildren().forPath(path);
            } catch (org.apache.zookeeper.KeeperException.NoNodeException e) {
                continue; // went away meanwhile (ephemeral)
            }
            out.put(path, data == null ? new byte[0] : data);
            for (String child : children) {
                todo.add(path.equals("/") ? "/" + child : path + "/" + child);
            }
        }
        return out;
    }

    static RedissonClient redisson(String address, String password) {
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE);
        var single = config.useSingleServer().setAddress(address).setConnectionMinimumIdleSize(1);
        if (password != null) {
            single.setPassword(password);
        }
        return Redisson.create(config);
    }

    /** SCAN over every key, dumped by type: key name, then every value (and field, member, entry). */
    static int redisDump(RedissonClient redis, BiConsumer<String, String> sink) {
        RKeys keys = redis.getKeys();
        int n = 0;
        for (String key : keys.getKeys()) {
            n++;
            sink.accept("redis key name " + key, key);
            RType type = keys.getType(key);
            String where = "redis " + type + " " + key;
            if (type == null) {
                continue;
            }
            switch (type) {
                case OBJECT ->
                    sink.accept(
                            where,
                            String.valueOf(
                                    redis.getBucket(key, StringCodec.INSTANCE).get()));
                case MAP ->
                    redis.<String, String>getMap(key, StringCodec.INSTANCE)
                            .readAllMap()
                            .forEach((k, v) -> sink.accept(where + " field " + k, k + "=" + v));
                case LIST ->
                    redis.<String>getList(key, StringCodec.INSTANCE).readAll().forEach(v -> sink.accept(where, v));
                case SET ->
                    redis.<String>getSet(key, StringCodec.INSTANCE).readAll().forEach(v -> sink.accept(where, v));
                case ZSET ->
                    redis.<String>getScoredSortedSet(key, StringCodec.INSTANCE)
                            .readAll()
                            .forEach(v -> sink.accept(where, v));
                case STREAM ->
                    redis.<String, String>getStream(key, StringCodec.INSTANCE)
                            .range(StreamRangeArgs.startId(StreamMessageId.MIN).endId(StreamMessageId.MAX))
                            .forEach((id, entry) -> sink.accept(where + " " + id, entry.toString()));
                default -> sink.accept(where, "(type " + type + " not dumped)");
            }
        }
        return n;
    }

    /** Every row of every table in schema PUBLIC (H2): {@code sink(table.column, value)}. */
    static List<String> dbDump(DataSource ds, BiConsumer<String, String> sink) throws SQLException {
        List<String> tables = new ArrayList<>();
        try (Connection c = ds.getConnection()) {
            DatabaseMetaData meta = c.getMetaData();
            try (ResultSet rs = meta.getTables(null, "PUBLIC", "%", new String[] {"TABLE"})) {
                while (rs.next()) {
                    tables.add(rs.getString("TABLE_NAME"));
                }
            }
            for (String table : tables) {
                try (Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT * FROM \"" + table + "\"")) {
                    ResultSetMetaData md = rs.getMetaData();
                    while (rs.next()) {
                        for (int i = 1; i <= md.getColumnCount(); i++) {
                            sink.accept(table + "." + md.getColumnName(i), rs.getString(i));
                        }
                    }
                }
            }
        }
        return tables;
    }

    /**
     * Captures every log event of this JVM (servers and SDK clients run in it) into {@code file}, with
     * io.pidpool at TRACE and the libraries at DEBUG/INFO; the console keeps its old threshold.
     */
    static final class LogCapture implements AutoCloseable {
        private final Path file;
        private final FileAppender<ILoggingEvent> appender;
        private final Map<String, Level> previousLevels = new LinkedHashMap<>();
        private final ThresholdFilter consoleFilter = new ThresholdFilter();
        private final List<Appender<ILoggingEvent>> filtered = new ArrayList<>();

        LogCapture(Path file) {
            this.file = file;
            LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
            PatternLayoutEncoder encoder = new PatternLayoutEncoder();
            encoder.setContext(ctx);
            encoder.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %logger - %msg %mdc%n%ex{full}");
            encoder.setCharset(StandardCharsets.UTF_8);
            encoder.start();
            appender = new FileAppender<>();
            appender.setContext(ctx);
            appender.setName("security-it-capture");
            appender.setFile(file.toString());
            appender.setAppend(false);
            appender.setImmediateFlush(true);
            appender.setEncoder(encoder);
            appender.start();
            Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
            consoleFilter.setLevel("INFO");
            consoleFilter.start();
            root.iteratorForAppenders().forEachRemaining(a -> {
                a.addFilter(consoleFilter);
                filtered.add(a);
            });
            root.addAppender(appender);
            level(ctx, org.slf4j.Logger.ROOT_LOGGER_NAME, Level.INFO);
            level(ctx, "io.pidpool", Level.TRACE);
            level(ctx, "org.apache.curator", Level.DEBUG);
            level(ctx, "org.apache.zookeeper", Level.INFO);
            level(ctx, "org.redisson", Level.DEBUG);
            level(ctx, "io.javalin", Level.DEBUG);
            level(ctx, "org.eclipse.jetty", Level.INFO);
            level(ctx, "com.zaxxer.hikari", Level.DEBUG);
            level(ctx, "org.flywaydb", Level.INFO);
            level(ctx, "org.jdbi", Level.DEBUG);
        }

        private void level(LoggerContext ctx, String name, Level level) {
            Logger logger = ctx.getLogger(name);
            previousLevels.put(name, logger.getLevel());
            logger.setLevel(level);
        }

        Path file() {
            return file;
        }

        String read() {
            try {
                return Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() {
            LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
            ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(appender);
            appender.stop();
            previousLevels.forEach((name, level) -> ctx.getLogger(name).setLevel(level));
            for (Appender<ILoggingEvent> a : filtered) {
                a.clearAllFilters();
            }
        }
    }

    static String namespaceRoot(String cluster) {
        return "/" + new ZkLayout(cluster).namespace();
    }
}
