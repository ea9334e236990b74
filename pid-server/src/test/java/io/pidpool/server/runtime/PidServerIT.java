package io.pidpool.server.runtime;

import static io.pidpool.server.ItSupport.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.ItSupport;
import io.pidpool.server.ItSupport.Lines;
import io.pidpool.server.PidServerMain;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.embedded.EmbeddedRedis;
import io.pidpool.server.embedded.EmbeddedZooKeeper;
import io.pidpool.worker.runtime.WorkerPool;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code server --config server.yml} against a real ZooKeeper (embedded, own port), Redis (the
 * machine's when {@code PIDPOOL_TEST_REDIS_URL} is set, else an embedded one) and an in-memory H2;
 * and start-up failures when a dependency is unreachable.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PidServerIT {
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String ADMIN = "it-admin-token-0123456789";
    static final String VIEWER = "it-viewer-token-0123456789";

    @TempDir
    static Path dir;

    EmbeddedZooKeeper zk;
    EmbeddedRedis embeddedRedis;
    String redisAddress;

    @BeforeAll
    void infrastructure() {
        ItSupport.tmpdir();
        zk = EmbeddedZooKeeper.start(dir.resolve("zk"), ItSupport.freePorts(1)[0], 1000);
        String fromEnv = System.getenv("PIDPOOL_TEST_REDIS_URL");
        if (fromEnv != null && !fromEnv.isBlank()) {
            redisAddress = fromEnv;
        } else {
            embeddedRedis = EmbeddedRedis.start(dir.resolve("redis"), ItSupport.freePorts(1)[0]);
            redisAddress = embeddedRedis.address();
        }
    }

    @AfterAll
    void stopInfrastructure() {
        if (embeddedRedis != null) {
            embeddedRedis.close();
        }
        zk.close();
    }

    String yaml(int httpPort) {
        return """
                cluster: it
                http: { host: 127.0.0.1, port: %d }
                zookeeper: { connect: "wrong-host:1", sessionTimeoutMs: 4000, connectionTimeoutMs: 10000 }
                redis: { address: "%s" }
                database: { url: "jdbc:h2:mem:%s;DB_CLOSE_DELAY=-1" }
                security:
                  secretKey: "%s"
                  tokens:
                    - { name: ops, token: "%s", role: admin }
                    - { name: dashboard, token: "%s", role: viewer }
                worker: { enabled: false }
                """
                .formatted(httpPort, redisAddress, UUID.randomUUID().toString().replace("-", ""), KEY, ADMIN, VIEWER);
    }

    @Test
    void serverCommandJoinsRealInfrastructureWithEnvironmentOverrides() throws Exception {
        int http = ItSupport.freePorts(1)[0];
        Path config = Files.writeString(dir.resolve("server.yml"), yaml(http));
        Map<String, String> env = new HashMap<>();
        env.put("PIDPOOL_ZOOKEEPER_CONNECT", zk.connectString()); // the file names a host that does not exist

        Lines out = new Lines();
        Lines err = new Lines();
        List<Runnable> hooks = new ArrayList<>();
        CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(() -> PidServerMain.run(
                new String[] {"server", "--config", config.toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                env,
                (name, action) -> {
                    synchronized (hooks) {
                        hooks.add(action);
                    }
                }));
        await().atMost(Duration.ofSeconds(60))
                .failFast("server exited: " + err.lines(), exit::isDone)
                .until(() -> out.find("PidPool ready:").isPresent());
        assertThat(out.find("PidPool ready:"))
                .hasValue("PidPool ready: http=http://127.0.0.1:" + http + " zookeeper=" + zk.connectString()
                        + " redis=" + redisAddress + " cluster=it");

        String base = "http://127.0.0.1:" + http;
        var health = ItSupport.get(base + "/health", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        assertThat(health.body())
                .contains("\"zookeeper\"")
                .contains("\"redis\"")
                .contains("\"database\"");
        assertThat(ItSupport.get(base + "/api/v1/cluster", VIEWER).statusCode()).isEqualTo(200);
        assertThat(ItSupport.postJson(base + "/api/v1/batches", VIEWER, "{\"operations\":[]}")
                        .statusCode())
                .isEqualTo(403);
        // the coordination node: this server leads, and batches are applied end to end
        String self = JSON.readTree(
                        ItSupport.get(base + "/api/v1/cluster", VIEWER).body())
                .path("self")
                .asText();
        assertThat(ItSupport.awaitLeader(base, VIEWER)).isEqualTo(self);
        var put = ItSupport.putJson(
                base + "/api/v1/modules/fin%23risk%23scorer?wait=true",
                ADMIN,
                "{\"servers\":2,\"monthlyDemand\":1000}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        assertThat(JSON.readTree(put.body()).path("status").asText()).isEqualTo("DEALED");
        var add = ItSupport.postJson(
                base + "/api/v1/batches?wait=true",
                ADMIN,
                "{\"operations\":[{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\",\"pids\":["
                        + "{\"id\":\"u1\",\"secret\":\"pw-one\",\"monthlyQuota\":100},"
                        + "{\"id\":\"u2\",\"secret\":\"pw-two\",\"monthlyQuota\":200}]}]}");
        assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
        var batch = JSON.readTree(add.body());
        assertThat(batch.path("status").asText()).isEqualTo("DEALED");
        assertThat(batch.path("requestedBy").asText()).isEqualTo("ops");
        assertThat(batch.path("results").get(0).path("ok").asBoolean())
                .as(add.body())
                .isTrue();
        assertThat(add.body()).doesNotContain("pw-one");

        var module = JSON.readTree(ItSupport.get(base + "/api/v1/modules/fin%23risk%23scorer", VIEWER)
                .body());
        assertThat(module.path("servers").asInt()).isEqualTo(2);
        assertThat(module.path("pids").asInt()).isEqualTo(2);
        var pids = JSON.readTree(ItSupport.get(base + "/api/v1/pids?module=fin%23risk%23scorer", VIEWER)
                .body());
        assertThat(pids.path("pids")).hasSize(2);
        assertThat(pids.path("pids").get(1).path("monthlyQuota").asLong()).isEqualTo(200);
        var again = JSON.readTree(
                ItSupport.get(base + "/api/v1/batches/" + batch.path("id").asText(), VIEWER)
                        .body());
        assertThat(again.path("status").asText()).isEqualTo("DEALED");

        List<Runnable> registered;
        synchronized (hooks) {
            registered = List.copyOf(hooks);
        }
        registered.forEach(Runnable::run);
        assertThat(exit.get(60, TimeUnit.SECONDS)).isZero();
        assertThat(ItSupport.isFree(http)).isTrue();
        assertThat(String.join("\n", err.lines())).doesNotContain(ADMIN).doesNotContain(KEY);
    }

    @Test
    void usesTheClusterNamespaceInZooKeeperAndRunsTheWorkerWhenEnabled() throws Exception {
        int http = ItSupport.freePorts(1)[0];
        ServerConfig config = new ConfigLoader(
                        Map.of("PIDPOOL_ZOOKEEPER_CONNECT", zk.connectString(), "PIDPOOL_WORKER_ENABLED", "true"))
                .load(yaml(http), "server.yml");
        try (PidServer server = new PidServer(config).start()) {
            server.curator().create().creatingParentsIfNeeded().forPath("/probe");
            var zooKeeper = server.curator().getZookeeperClient().getZooKeeper();
            assertThat(zooKeeper.exists("/pidpool/it/probe", false)).isNotNull();
            server.curator().delete().forPath("/probe");
            assertThat(server.health().status()).isEqualTo(io.pidpool.server.http.HealthCheck.Status.UP);

            assertThat(server.workers().state()).isEqualTo(WorkerPool.State.STARTED);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> zooKeeper.exists("/pidpool/it/workers/default", false) != null
                            && zooKeeper
                                    .getChildren("/pidpool/it/workers/default", false)
                                    .contains(server.workers().memberId()));
            assertThat(zooKeeper.getChildren("/pidpool/it/worker-ids", false)).isNotEmpty();
        }
    }

    @Test
    void aServerOfAnotherClusterRefusesToStartOnADatabaseBoundToTheFirst() throws Exception {
        String url = "jdbc:h2:file:"
                + dir.resolve("shared-" + UUID.randomUUID()).resolve("pidpool") + ";DB_CLOSE_ON_EXIT=FALSE";
        Map<String, String> env = Map.of("PIDPOOL_ZOOKEEPER_CONNECT", zk.connectString(), "PIDPOOL_DATABASE_URL", url);
        int[] http = ItSupport.freePorts(2);

        Cli a = new Cli(
                Files.writeString(dir.resolve("a.yml"), yaml(http[0]).replace("cluster: it", "cluster: a")), env);
        await().atMost(Duration.ofSeconds(60))
                .failFast("server a exited: " + a.err.lines(), a.exit::isDone)
                .until(() -> a.out.find("PidPool ready:").isPresent());

        Cli b = new Cli(
                Files.writeString(dir.resolve("b.yml"), yaml(http[1]).replace("cluster: it", "cluster: b")), env);
        assertThat(b.exit.get(60, TimeUnit.SECONDS))
                .as("exit code of b; out: %s", b.out.lines())
                .isEqualTo(1);
        assertThat(b.err.lines())
                .singleElement()
                .asString()
                .startsWith("pid-server: cannot start: ")
                .contains("belongs to cluster 'a'")
                .contains("this server is of cluster 'b'");
        assertThat(b.out.find("PidPool ready:")).isEmpty();
        assertThat(ItSupport.isFree(http[1])).isTrue();

        assertThat(a.terminate()).isZero();
        // cluster a starts again on its database
        Cli again = new Cli(dir.resolve("a.yml"), env);
        await().atMost(Duration.ofSeconds(60))
                .failFast("server a exited: " + again.err.lines(), again.exit::isDone)
                .until(() -> again.out.find("PidPool ready:").isPresent());
        assertThat(again.terminate()).isZero();
    }

    /** {@code pid-server server --config file} in a background thread. */
    static final class Cli {
        final Lines out = new Lines();
        final Lines err = new Lines();
        final List<Runnable> hooks = new ArrayList<>();
        final CompletableFuture<Integer> exit;

        Cli(Path config, Map<String, String> env) {
            exit = CompletableFuture.supplyAsync(() -> PidServerMain.run(
                    new String[] {"server", "--config", config.toString()},
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8),
                    env,
                    (name, action) -> {
                        synchronized (hooks) {
                            hooks.add(action);
                        }
                    }));
        }

        /** What a SIGTERM does: run the shutdown hooks; returns the exit code. */
        int terminate() throws Exception {
            List<Runnable> registered;
            synchronized (hooks) {
                registered = List.copyOf(hooks);
            }
            registered.forEach(Runnable::run);
            return exit.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void unreachableDependenciesFailStartUpFastNamingThemAndReleaseEverything() {
        int[] ports = ItSupport.freePorts(2);
        int http = ports[0];
        int nothing = ports[1]; // nothing listens here
        String base = yaml(http);

        ServerConfig noZk = new ConfigLoader(Map.of(
                        "PIDPOOL_ZOOKEEPER_CONNECT",
                        "127.0.0.1:" + nothing,
                        "PIDPOOL_ZOOKEEPER_CONNECTION_TIMEOUT_MS",
                        "1000"))
                .load(base, "server.yml");
        assertUnavailable(noZk, "zookeeper.connect");

        ServerConfig noDb = new ConfigLoader(Map.of(
                        "PIDPOOL_ZOOKEEPER_CONNECT",
                        zk.connectString(),
                        "PIDPOOL_DATABASE_URL",
                        "jdbc:postgresql://127.0.0.1:" + nothing + "/x?password=db-secret"))
                .load(base, "server.yml");
        assertUnavailable(noDb, "database.url");

        // through the Redisson passthrough block, without Redisson's default retries (~6 s)
        ServerConfig noRedis = new ConfigLoader(Map.of(
                        "PIDPOOL_ZOOKEEPER_CONNECT",
                        zk.connectString(),
                        "PIDPOOL_REDIS_ADDRESS",
                        "",
                        "PIDPOOL_REDIS_REDISSON",
                        "{singleServerConfig: {address: \"redis://127.0.0.1:" + nothing + "\", retryAttempts: 0}}"))
                .load(base, "server.yml");
        assertUnavailable(noRedis, "redis.redisson");
        assertThat(ItSupport.isFree(http)).isTrue();
    }

    @Test
    void aTakenHttpPortFailsStartUpBeforeTheServerJoinsTheElection() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket()) {
            taken.bind(new java.net.InetSocketAddress("127.0.0.1", 0));
            int port = taken.getLocalPort();
            ServerConfig config = new ConfigLoader(
                            Map.of("PIDPOOL_ZOOKEEPER_CONNECT", zk.connectString(), "PIDPOOL_CLUSTER", "port-taken"))
                    .load(yaml(port), "server.yml");
            assertThatThrownBy(() -> new PidServer(config).start())
                    .isInstanceOf(PidPoolException.class)
                    .hasMessageContaining("127.0.0.1:" + port)
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("http.port"));
        }
        // it never joined the election and so never led: nothing of it reached ZooKeeper at all (no
        // worker-id slot, no latch, no epoch; not even the cluster's namespace was created)
        try (var client = org.apache.curator.framework.CuratorFrameworkFactory.newClient(
                zk.connectString(), new org.apache.curator.retry.RetryOneTime(100))) {
            client.start();
            assertThat(client.blockUntilConnected(10, TimeUnit.SECONDS)).isTrue();
            String cluster = "/" + new io.pidpool.core.protocol.ZkLayout("port-taken").namespace();
            assertThat(client.checkExists().forPath(cluster)).isNull();
            assertThat(client.checkExists().forPath(cluster + "/leader")).isNull();
            assertThat(client.checkExists().forPath(cluster + "/epoch")).isNull();
        }
    }

    private static void assertUnavailable(ServerConfig config, String names) {
        long started = System.nanoTime();
        assertThatThrownBy(() -> new PidServer(config).start())
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE))
                .hasMessageContaining(names)
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo(names))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("db-secret"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
        System.out.println("TIMING " + names + " " + Duration.ofNanos(System.nanoTime() - started));
    }
}
