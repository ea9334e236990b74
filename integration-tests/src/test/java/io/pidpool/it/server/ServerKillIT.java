package io.pidpool.it.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger;
import io.pidpool.it.platform.PlatformServer;
import io.pidpool.it.zk.ZooKeepers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.curator.test.TestingServer;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader as a <em>process</em> killed with SIGKILL in the middle of a batch: three pid-server
 * JVMs ({@code server --config}) on one ZooKeeper (curator-test), the test Redis and one shared
 * database (an H2 TCP server in the test JVM, or a fresh PostgreSQL schema when {@code
 * PIDPOOL_TEST_POSTGRES_URL} is set), and two SDK client JVMs ({@link ClientProcess}) holding PIDs
 * and logging in to the recording platform, which fails the test on any second concurrent login.
 *
 * <p>The batch (5,000 PIDs for a module nobody serves, plus 4 for the clients' module) is submitted
 * to a follower; the test waits until the leader holds the batch row's lock (its transaction is
 * open: the probe's {@code SELECT ... FOR UPDATE} cannot get it) and SIGKILLs the leader's JVM right
 * then. Asserted: a survivor leads with a higher epoch; the batch ends DEALED once, stamped with the
 * successor's epoch (the killed transaction rolled back and the successor applied it from scratch),
 * every operation succeeded (a second application would fail on existing ids) and every PID is in
 * the database once; the 4 new PIDs are handed out; the PIDs held before the kill never moved (one
 * platform login each, still open, no revocation); no double login, no violation, at any time.
 */
class ServerKillIT {
    private static final Logger log = LoggerFactory.getLogger(ServerKillIT.class);
    static final String SERVED = "fin#risk#scorer";
    static final String UNSERVED = "ops#archive#cold";
    static final String TOKEN = "it-admin-token-" + HexFormat.of().formatHex(randomBytes(8));
    static final Duration SERVER_T = Duration.ofSeconds(3);
    static final Duration CLIENT_T = Duration.ofSeconds(6);
    static final Duration WAIT = Duration.ofSeconds(90);
    static final int HELD = 10;
    static final int BULK_OPS = 4;
    static final int BULK_PER_OP = 1_250;

    TestingServer zk;
    SharedDatabase db;
    PlatformServer platform;
    String cluster;
    String secretKey;
    Path dir;
    final List<ServerProcess> servers = new ArrayList<>();
    final List<ClientProcess> clients = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        zk = ZooKeepers.standalone();
        db = SharedDatabase.create();
        platform = PlatformServer.start();
        cluster = "k" + ProcessHandle.current().pid() + "-"
                + ThreadLocalRandom.current().nextInt(1_000_000);
        secretKey = Base64.getEncoder().encodeToString(randomBytes(32));
        dir = Path.of("target", "it-servers", cluster);
        Files.createDirectories(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        clients.forEach(ClientProcess::close);
        servers.forEach(ServerProcess::close);
        platform.close();
        db.close();
        zk.close();
    }

    static byte[] randomBytes(int n) {
        byte[] bytes = new byte[n];
        new SecureRandom().nextBytes(bytes);
        return bytes;
    }

    ServerProcess startServer(String name) throws Exception {
        String yml = String.join(
                "\n",
                "cluster: " + cluster,
                "http: { host: 127.0.0.1, port: 0 }",
                "zookeeper: { connect: \"" + zk.getConnectString() + "\", sessionTimeoutMs: " + SERVER_T.toMillis()
                        + ", connectionTimeoutMs: 30000 }",
                "redis: { address: \"" + RedisSupport.sharedUrl() + "\" }",
                "database: { url: \"" + db.url() + "\", maxPoolSize: 4 }",
                "security:",
                "  secretKey: \"" + secretKey + "\"",
                "  tokens:",
                "    - { name: it, token: \"" + TOKEN + "\", role: admin }",
                "worker: { enabled: false }",
                "");
        Path config = dir.resolve(name + ".yml");
        Files.writeString(config, yml, StandardCharsets.UTF_8);
        ServerProcess server = ServerProcess.start(name, config, TOKEN, dir);
        servers.add(server);
        return server.awaitReady(WAIT);
    }

    ClientProcess startClient(String name) {
        ClientProcess client = ClientProcess.start(new ClientProcess.Spec(
                name, zk.getConnectString(), cluster, SERVED, CLIENT_T, platform.address(), dir, secretKey));
        clients.add(client);
        return client;
    }

    /** The cluster as {@code server} sees it: leader id and epoch (leader null while there is none). */
    record ClusterState(String leader, long epoch) {}

    static ClusterState clusterOf(ServerProcess server) {
        JsonNode c = server.get("/api/v1/cluster");
        return new ClusterState(
                c.path("leader").isNull() ? null : c.path("leader").asText(null),
                c.path("epoch").asLong());
    }

    static String addJson(String module, List<String> pids) {
        return "{\"type\":\"ADD\",\"module\":\"" + module + "\",\"pids\":["
                + pids.stream()
                        .map(p -> "{\"id\":\"" + p + "\",\"secret\":\"pw-" + p + "\",\"monthlyQuota\":100}")
                        .collect(Collectors.joining(","))
                + "]}";
    }

    static List<String> ids(String prefix, int from, int count) {
        return IntStream.range(from, from + count).mapToObj(i -> prefix + i).toList();
    }

    @Test
    void theLeadersJvmKilledMidBatchLeavesTheBatchToItsSuccessorExactlyOnceAndMovesNothing() throws Exception {
        ServerProcess first = startServer("s1");
        await().atMost(WAIT).until(() -> clusterOf(first).leader() != null);
        ServerProcess s2 = startServer("s2");
        ServerProcess s3 = startServer("s3");
        Map<String, ServerProcess> byNodeId = new TreeMap<>();
        for (ServerProcess s : servers) {
            byNodeId.put(s.nodeId(), s);
        }
        ClusterState before = clusterOf(s3);
        ServerProcess leader = byNodeId.get(before.leader());
        assertThat(leader)
                .as("leader %s is one of %s", before.leader(), byNodeId.keySet())
                .isNotNull();
        ServerProcess follower =
                servers.stream().filter(s -> s != leader).findFirst().orElseThrow();
        log.info("leader {} ({}), epoch {}", before.leader(), leader, before.epoch());

        // two client JVMs share HELD PIDs of the served module
        follower.put("/api/v1/modules/" + SERVED.replace("#", "%23"), "{\"servers\":2}");
        follower.put("/api/v1/modules/" + UNSERVED.replace("#", "%23"), "{\"servers\":1}");
        ClientProcess a = startClient("A");
        ClientProcess b = startClient("B");
        a.awaitHandshake(WAIT);
        b.awaitHandshake(WAIT);
        List<String> held = ids("h", 0, HELD);
        JsonNode setup = follower.post("/api/v1/batches?wait=true", "{\"operations\":[" + addJson(SERVED, held) + "]}");
        assertThat(setup.path("status").asText()).isEqualTo("DEALED");
        await().atMost(WAIT)
                .until(() -> heldByPlatform(held) && a.held().size() + b.held().size() == HELD);
        Map<String, String> holderBefore = new TreeMap<>();
        held.forEach(p -> holderBefore.put(p, platform.holder(p).orElseThrow()));
        assertThat(a.held()).isNotEmpty();
        assertThat(b.held()).isNotEmpty();

        // the big batch, accepted by a follower
        List<String> bulk = ids("bulk", 0, BULK_OPS * BULK_PER_OP);
        List<String> fresh = ids("n", 0, 4);
        List<String> ops = new ArrayList<>();
        for (int i = 0; i < BULK_OPS; i++) {
            ops.add(addJson(UNSERVED, bulk.subList(i * BULK_PER_OP, (i + 1) * BULK_PER_OP)));
        }
        ops.add(addJson(SERVED, fresh));
        JsonNode accepted = follower.post("/api/v1/batches", "{\"operations\":[" + String.join(",", ops) + "]}");
        String batchId = accepted.path("id").asText();
        assertThat(batchId).isNotBlank();

        // SIGKILL the leader's JVM while its transaction holds the batch row
        await("the leader's batch transaction is open")
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> db.rowLocked(Long.parseLong(batchId)));
        long killedAt = System.nanoTime();
        leader.kill();
        log.info("killed the leader {} mid-batch {}", leader, batchId);
        assertThat(leader.isAlive()).isFalse();

        // a survivor leads with a higher epoch
        await().atMost(WAIT).until(() -> {
            ClusterState now = clusterOf(follower);
            return now.leader() != null && !now.leader().equals(before.leader()) && now.epoch() > before.epoch();
        });
        ClusterState after = clusterOf(follower);
        long electedMs = (System.nanoTime() - killedAt) / 1_000_000;
        assertThat(byNodeId.get(after.leader())).isIn(servers).isNotSameAs(leader);

        // the batch: DEALED once, by the successor, every operation applied
        await().atMost(WAIT).until(() -> "DEALED"
                .equals(follower.get("/api/v1/batches/" + batchId)
                        .path("status")
                        .asText()));
        long dealedMs = (System.nanoTime() - killedAt) / 1_000_000;
        JsonNode done = follower.get("/api/v1/batches/" + batchId);
        List<Boolean> ok = new ArrayList<>();
        done.path("results").forEach(r -> ok.add(r.path("ok").asBoolean()));
        assertThat(ok)
                .as("results %s", done.path("results"))
                .hasSize(BULK_OPS + 1)
                .containsOnly(true);
        assertThat(db.batchEpoch(Long.parseLong(batchId)))
                .as("the killed leader's transaction rolled back; the successor applied the batch")
                .isEqualTo(after.epoch());
        assertThat(db.count("SELECT COUNT(*) FROM pool_pid")).isEqualTo(HELD + bulk.size() + fresh.size());
        assertThat(db.count("SELECT COUNT(*) FROM op_batch WHERE status <> 'DEALED'"))
                .isZero();

        // the new PIDs of the served module are handed out; the held ones never moved
        List<String> all = new ArrayList<>(held);
        all.addAll(fresh);
        await().atMost(WAIT)
                .until(() -> heldByPlatform(all) && a.held().size() + b.held().size() == all.size());
        for (String pid : held) {
            List<PlatformLedger.Login> logins = platform.logins(pid);
            assertThat(logins).as("logins to %s", pid).hasSize(1);
            assertThat(logins.get(0).isOpen()).isTrue();
            assertThat(logins.get(0).client()).isEqualTo(holderBefore.get(pid));
        }
        for (String pid : fresh) {
            assertThat(platform.logins(pid)).as("logins to %s", pid).hasSize(1);
        }
        assertThat(a.lines("REVOKED", null)).isEmpty();
        assertThat(b.lines("REVOKED", null)).isEmpty();
        assertThat(Math.abs(a.held().size() - b.held().size())).isLessThanOrEqualTo(1);
        platform.assertNoDoubleLogin();
        platform.assertNoViolations();
        log.info(
                "SIGKILL of the leader: successor {} (epoch {} -> {}) after {} ms; batch of {} PIDs DEALED after {} ms"
                        + " (database {})",
                after.leader(),
                before.epoch(),
                after.epoch(),
                electedMs,
                bulk.size() + fresh.size(),
                dealedMs,
                db.kind());
    }

    boolean heldByPlatform(List<String> pids) {
        return pids.stream().allMatch(p -> platform.holder(p).isPresent());
    }

    /**
     * The database every server process shares: an H2 TCP server in this JVM (in-memory database),
     * or a fresh schema on the PostgreSQL of {@code PIDPOOL_TEST_POSTGRES_URL}.
     */
    static final class SharedDatabase implements AutoCloseable {
        private final String kind;
        private final String url;
        private final Server h2;
        private final String adminUrl;
        private final String schema;

        private SharedDatabase(String kind, String url, Server h2, String adminUrl, String schema) {
            this.kind = kind;
            this.url = url;
            this.h2 = h2;
            this.adminUrl = adminUrl;
            this.schema = schema;
        }

        static SharedDatabase create() throws SQLException {
            String name = "pp_k_" + HexFormat.of().formatHex(randomBytes(6));
            String postgres = System.getenv("PIDPOOL_TEST_POSTGRES_URL");
            if (postgres != null && !postgres.isBlank()) {
                try (Connection c = DriverManager.getConnection(postgres);
                        Statement s = c.createStatement()) {
                    s.execute("CREATE SCHEMA " + name);
                }
                String url = postgres + (postgres.contains("?") ? "&" : "?") + "currentSchema=" + name;
                return new SharedDatabase("PostgreSQL", url, null, postgres, name);
            }
            Server server =
                    Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
            String url = "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:" + name + ";DB_CLOSE_DELAY=-1";
            return new SharedDatabase("H2 TCP server", url, server, null, name);
        }

        String url() {
            return url;
        }

        String kind() {
            return kind;
        }

        /**
         * Whether another transaction holds the batch row's lock right now (the leader's batch
         * transaction: {@code markDealing} locks the row first and keeps it to the commit). Tries
         * to lock it without waiting, and lets go at once.
         */
        boolean rowLocked(long batchId) throws SQLException {
            try (Connection c = DriverManager.getConnection(url)) {
                if (h2 != null) {
                    try (Statement s = c.createStatement()) {
                        s.execute("SET LOCK_TIMEOUT 1");
                    }
                }
                c.setAutoCommit(false);
                String sql =
                        "SELECT batch_id FROM op_batch WHERE batch_id = ? FOR UPDATE" + (h2 == null ? " NOWAIT" : "");
                try (PreparedStatement p = c.prepareStatement(sql)) {
                    p.setLong(1, batchId);
                    try (ResultSet rs = p.executeQuery()) {
                        rs.next();
                    }
                    return false;
                } catch (SQLException locked) {
                    return true;
                } finally {
                    c.rollback();
                }
            }
        }

        long batchEpoch(long batchId) throws SQLException {
            return count("SELECT leader_epoch FROM op_batch WHERE batch_id = " + batchId);
        }

        long count(String sql) throws SQLException {
            try (Connection c = DriverManager.getConnection(url);
                    Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery(sql)) {
                rs.next();
                return rs.getLong(1);
            }
        }

        @Override
        public void close() throws SQLException {
            if (h2 != null) {
                try (Connection c = DriverManager.getConnection(url);
                        Statement s = c.createStatement()) {
                    s.execute("SHUTDOWN");
                } catch (SQLException e) {
                    // already gone
                }
                h2.stop();
            } else {
                try (Connection c = DriverManager.getConnection(adminUrl);
                        Statement s = c.createStatement()) {
                    s.execute("DROP SCHEMA " + schema + " CASCADE");
                }
            }
        }
    }
}
