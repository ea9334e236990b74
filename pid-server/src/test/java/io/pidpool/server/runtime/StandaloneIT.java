package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pidpool.server.ItSupport;
import io.pidpool.server.ItSupport.Lines;
import io.pidpool.server.PidServerMain;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code standalone} in this JVM through the real command line: embedded ZooKeeper, Redis and H2 on
 * free ports of 127.0.0.1 with a temporary data directory. "SIGTERM" is the shutdown hook the
 * command registered, run by the test.
 */
class StandaloneIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Duration START = Duration.ofSeconds(90);

    @TempDir
    Path dataDir;

    /** One run of the command in a background thread. */
    static final class Run {
        final Lines out = new Lines();
        final Lines err = new Lines();
        final List<Runnable> hooks = new ArrayList<>();
        final CompletableFuture<Integer> exit;

        Run(String... args) {
            ItSupport.tmpdir();
            exit = CompletableFuture.supplyAsync(() -> PidServerMain.run(
                    args,
                    new PrintStream(out, true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8),
                    Map.of(),
                    (name, action) -> {
                        synchronized (hooks) {
                            hooks.add(action);
                        }
                    }));
        }

        String awaitReady() {
            await().atMost(START)
                    .pollInterval(Duration.ofMillis(100))
                    .failFast("standalone exited: " + err.lines(), exit::isDone)
                    .until(() -> out.find("PidPool ready:").isPresent());
            return out.find("PidPool ready:").orElseThrow();
        }

        /** What a SIGTERM does: run the registered shutdown hooks; returns the exit code. */
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
    void startsAnswersAndStopsCleanlyThenRestartsOnTheSameData() throws Exception {
        int[] ports = ItSupport.freePorts(3);
        int http = ports[0], zk = ports[1], redis = ports[2];
        String[] args = {
            "standalone",
            "--http-port",
            Integer.toString(http),
            "--zk-port",
            Integer.toString(zk),
            "--redis-port",
            Integer.toString(redis),
            "--data-dir",
            dataDir.toString()
        };

        // first run: the admin token is generated and printed before the ready line
        Run first = new Run(args);
        String ready = first.awaitReady();
        assertThat(ready)
                .isEqualTo("PidPool ready: http=http://127.0.0.1:" + http + " zookeeper=127.0.0.1:" + zk
                        + " redis=redis://127.0.0.1:" + redis + " cluster=default");
        assertThat(first.out.lines()).hasSize(2);
        String tokenLine = first.out.lines().get(0);
        assertThat(tokenLine).startsWith("PidPool admin token: ");
        String token = tokenLine.split("\\s+")[3];

        String base = "http://127.0.0.1:" + http;
        HttpResponse<String> health = ItSupport.get(base + "/health", null);
        assertThat(health.statusCode()).as(health.body()).isEqualTo(200);
        JsonNode components = JSON.readTree(health.body()).path("components");
        for (String c : List.of("zookeeper", "database", "redis")) {
            assertThat(components.path(c).path("status").asText()).as(c).isEqualTo("UP");
        }

        HttpResponse<String> cluster = ItSupport.get(base + "/api/v1/cluster", token);
        assertThat(cluster.statusCode()).as(cluster.body()).isEqualTo(200);
        assertThat(JSON.readTree(cluster.body()).path("cluster").asText()).isEqualTo("default");
        assertThat(ItSupport.get(base + "/api/v1/cluster", null).statusCode()).isEqualTo(401);
        assertThat(ItSupport.get(base + "/", null).body()).contains("PidPool");

        // the single server leads; an operator batch is applied and stored in the H2 file
        assertThat(ItSupport.awaitLeader(base, token))
                .isEqualTo(JSON.readTree(cluster.body()).path("self").asText());
        HttpResponse<String> add = ItSupport.postJson(
                base + "/api/v1/batches?wait=true",
                token,
                "{\"operations\":[{\"type\":\"SET_SERVERS\",\"module\":\"fin#risk#scorer\",\"servers\":1},"
                        + "{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\",\"pids\":["
                        + "{\"id\":\"u1\",\"secret\":\"pw-one\",\"monthlyQuota\":100}]}]}");
        assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
        assertThat(JSON.readTree(add.body()).path("status").asText()).isEqualTo("DEALED");

        String key = Files.readString(dataDir.resolve("secret.key"));
        assertThat(first.terminate()).isZero();
        for (int port : ports) {
            assertThat(ItSupport.isFree(port)).as("port %d released", port).isTrue();
        }
        assertThat(dataDir.resolve("zookeeper/data/version-2")).isDirectory();
        assertThat(dataDir.resolve("redis/appendonly.aof")).isRegularFile();
        assertThat(dataDir.resolve("db/pidpool.mv.db")).isRegularFile();
        assertThat(dataDir.resolve("zookeeper")).isDirectoryNotContaining("glob:**/zookeeper.configuration*");

        // second run on the same data with a chosen token: the sealing key is kept
        String chosen = "chosen-admin-token-0123456789";
        List<String> withToken = new ArrayList<>(List.of(args));
        withToken.addAll(List.of("--admin-token", chosen));
        Run second = new Run(withToken.toArray(String[]::new));
        second.awaitReady();
        assertThat(second.out.lines()).hasSize(1); // no token line when one was given
        assertThat(ItSupport.get(base + "/api/v1/cluster", chosen).statusCode()).isEqualTo(200);
        assertThat(ItSupport.get(base + "/api/v1/cluster", token).statusCode()).isEqualTo(401);
        assertThat(Files.readString(dataDir.resolve("secret.key"))).isEqualTo(key);
        HttpResponse<String> pids = ItSupport.get(base + "/api/v1/pids", chosen);
        assertThat(JSON.readTree(pids.body()).path("pids").get(0).path("id").asText())
                .as("the PID added by the first run")
                .isEqualTo("u1");
        assertThat(second.terminate()).isZero();
        for (int port : ports) {
            assertThat(ItSupport.isFree(port)).as("port %d released", port).isTrue();
        }
    }

    @Test
    void aDataDirectoryFromBeforeTheClusterBindingStartsAndIsBoundToItsCluster() throws Exception {
        int[] ports = ItSupport.freePorts(3);
        String[] args = {
            "standalone",
            "--http-port",
            Integer.toString(ports[0]),
            "--zk-port",
            Integer.toString(ports[1]),
            "--redis-port",
            Integer.toString(ports[2]),
            "--data-dir",
            dataDir.toString(),
            "--admin-token",
            "a-token-0123456789abcdef"
        };
        // the data directory of a release before the binding: its schema at version 8, no pool_cluster
        String url = io.pidpool.server.embedded.H2Files.url(dataDir.resolve("db"));
        org.flywaydb.core.Flyway.configure(getClass().getClassLoader())
                .dataSource(url, null, null)
                .locations(io.pidpool.server.jdbc.Database.MIGRATIONS)
                .table(io.pidpool.server.jdbc.Database.HISTORY_TABLE)
                .placeholders(java.util.Map.of("pidpool_timestamp", "TIMESTAMP(3)", "pidpool_table_options", ""))
                .target("8")
                .load()
                .migrate();
        try (Connection c = DriverManager.getConnection(url);
                ResultSet rs = c.getMetaData().getTables(null, null, "POOL_CLUSTER", null)) {
            assertThat(rs.next()).as("pool_cluster before the binding").isFalse();
        }

        Run upgraded = new Run(args);
        upgraded.awaitReady();
        assertThat(upgraded.terminate()).isZero();
        try (Connection c = DriverManager.getConnection(url);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT cluster_name FROM pool_cluster")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("default");
        }
    }

    @Test
    void aTakenPortFailsStartUpNamingTheOptionAndLeavesNothingRunning() throws Exception {
        int[] ports = ItSupport.freePorts(3);
        try (ServerSocket taken = new ServerSocket(ports[2], 1, InetAddress.getByName("127.0.0.1"))) {
            Run run = new Run(
                    "standalone",
                    "--http-port",
                    Integer.toString(ports[0]),
                    "--zk-port",
                    Integer.toString(ports[1]),
                    "--redis-port",
                    Integer.toString(ports[2]),
                    "--data-dir",
                    dataDir.toString());
            assertThat(run.exit.get(60, TimeUnit.SECONDS)).isEqualTo(1);
            assertThat(String.join("\n", run.err.lines()))
                    .contains("--redis-port")
                    .contains("in use");
            assertThat(run.out.lines()).noneMatch(l -> l.startsWith("PidPool ready"));
        }
        // ZooKeeper had started before Redis failed: it was stopped again
        assertThat(ItSupport.isFree(ports[1])).isTrue();
        assertThat(ItSupport.isFree(ports[0])).isTrue();
    }

    @Test
    void shutdownDuringStartUpStopsWhatStarted() throws Exception {
        int[] ports = ItSupport.freePorts(3);
        AtomicReference<StandaloneServer> server = new AtomicReference<>(new StandaloneServer(
                new StandaloneServer.Options(ports[0], ports[1], ports[2], dataDir, "a-token-0123456789abcdef")));
        CompletableFuture<Void> starting =
                CompletableFuture.runAsync(() -> server.get().start());
        // stop as soon as ZooKeeper is up, while Redis or the server is still starting
        await().atMost(START)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> !ItSupport.isFree(ports[1]) || starting.isDone());
        server.get().close();
        assertThat(starting)
                .failsWithin(Duration.ofSeconds(60))
                .withThrowableThat()
                .havingRootCause()
                .withMessageContaining("shutting down");
        for (int port : ports) {
            assertThat(ItSupport.isFree(port)).as("port %d released", port).isTrue();
        }
    }
}
