package io.pidpool.it.security;

import static io.pidpool.it.security.SecurityWorld.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.it.security.SecurityWorld.LogCapture;
import io.pidpool.server.runtime.PidServer;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real pid-server (HTTP API, leader, H2) on a real ZooKeeper with digest ACLs and a real
 * redis-server with a password, and a real SDK client. A canary password is planted through the
 * HTTP API; the client must receive it (positive control), and no log line, API response, ZooKeeper
 * node, Redis key or value, or database row may contain it in clear, Base64 or hex. Each sink's scan
 * is shown to work by a planted control value it must find.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SecurityIT {
    private static final Logger log = LoggerFactory.getLogger(SecurityIT.class);
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CLUSTER = "sec";
    static final String MODULE = "sec#canary#app";
    static final String MODULE_URL = "sec%23canary%23app";
    static final String CANARY = "CANARYpw" + SecurityWorld.randomHex(12);
    /** Planted in plain form in every sink on purpose: the scanner must find it there. */
    static final String CONTROL = "CONTROLpw" + SecurityWorld.randomHex(12);

    static final String ADMIN = "sec-admin-" + SecurityWorld.randomHex(12);
    static final String ZK_AUTH = "pidpool:zk-" + SecurityWorld.randomHex(8);
    static final String REDIS_PASSWORD = "redis-" + SecurityWorld.randomHex(8);
    static final String KEY = SecurityWorld.randomKey();

    TestingServer zk;
    RedisProcess redis;
    PidServer server;
    LogCapture logs;
    String base;
    final Map<String, PidAccount> received = new ConcurrentHashMap<>();
    final List<String> responses = new ArrayList<>();
    String pidNodePath;
    String instanceNodePath;
    /** The SDK client, held open until the end (the ACL test reads its nodes). */
    PidClient client;

    @BeforeAll
    void start() throws Exception {
        Path dir = Path.of("target", "security-it");
        Files.createDirectories(dir);
        logs = new LogCapture(dir.resolve("canary.log").toAbsolutePath());
        zk = TestZooKeeper.start();
        redis = SecurityWorld.redisWithPassword(REDIS_PASSWORD);
        server = SecurityWorld.startServer(yaml(ZK_AUTH, REDIS_PASSWORD));
        base = "http://127.0.0.1:" + server.httpPort();
    }

    String yaml(String zkAuth, String redisPassword) {
        return """
                cluster: %s
                http: { host: 127.0.0.1, port: 0 }
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000, connectionTimeoutMs: 20000, auth: "%s" }
                redis: { address: "%s", password: "%s" }
                database: { url: "jdbc:h2:mem:sec%s;DB_CLOSE_DELAY=-1" }
                security:
                  secretKey: "%s"
                  tokens: [ { name: sec-admin, token: "%s", role: admin } ]
                """
                .formatted(
                        CLUSTER,
                        zk.getConnectString(),
                        zkAuth,
                        redis.url(),
                        redisPassword,
                        SecurityWorld.randomHex(6),
                        KEY,
                        ADMIN);
    }

    @AfterAll
    void stop() {
        try {
            if (client != null) {
                client.close();
            }
            if (server != null) {
                server.close();
            }
            if (logs != null) {
                // the shutdown's own log lines are scanned too
                CanaryScanner scanner = new CanaryScanner(CANARY);
                scanner.scan("log " + logs.file(), logs.read());
                assertThat(scanner.findings())
                        .as("canary in the logs after shutdown")
                        .isEmpty();
            }
        } finally {
            if (logs != null) {
                logs.close();
            }
            if (redis != null) {
                redis.close();
            }
            if (zk != null) {
                try {
                    zk.close();
                } catch (Exception e) {
                    log.warn("closing ZooKeeper", e);
                }
            }
        }
    }

    @Test
    @Order(1)
    void canaryReachesTheClientAndNothingElse() throws Exception {
        // plant: a module and an ADD batch through the HTTP API
        HttpResponse<String> put =
                send("PUT", base + "/api/v1/modules/" + MODULE_URL + "?wait=true", ADMIN, "{\"servers\":1}");
        assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        responses.add(put.body());
        HttpResponse<String> add = send(
                "POST",
                base + "/api/v1/batches?wait=true",
                ADMIN,
                "{\"operations\":[{\"type\":\"ADD\",\"module\":\"" + MODULE + "\",\"pids\":[{\"id\":\"canary-1\","
                        + "\"secret\":\"" + CANARY + "\",\"monthlyQuota\":100}]}]}");
        assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
        assertThat(JSON.readTree(add.body()).path("status").asText()).isEqualTo("DEALED");
        responses.add(add.body());
        String batchId = JSON.readTree(add.body()).path("id").asText();

        // positive control: a real SDK client (same ZooKeeper identity, Redis password, key) gets it
        client = PidClient.builder()
                .connectString(zk.getConnectString())
                .cluster(CLUSTER)
                .module(MODULE)
                .zookeeperAuth(ZK_AUTH)
                .redisAddress(redis.url())
                .redisPassword(REDIS_PASSWORD)
                .secretKey(KEY)
                .instanceId("canary-client")
                .sessionTimeout(Duration.ofSeconds(4))
                .listener(new PidListener() {
                    @Override
                    public void onAssigned(PidAccount account) {
                        received.put(account.id(), account);
                    }

                    @Override
                    public void onRevoked(PidAccount account) {}
                })
                .build();
        client.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> client.heldPids().contains("canary-1"));
        assertThat(received.get("canary-1").secret()).isEqualTo(CANARY);
        // quota through the password-protected Redis (the leader provisions the limit)
        await().atMost(Duration.ofSeconds(30)).until(() -> client.tryAcquire(1).isPresent());

        // every API answer, read while the PID is held
        for (String path : List.of(
                "/health",
                "/metrics",
                "/",
                "/api/v1/cluster",
                "/api/v1/modules",
                "/api/v1/modules/" + MODULE_URL,
                "/api/v1/pids",
                "/api/v1/pids?module=" + MODULE_URL,
                "/api/v1/batches/" + batchId,
                "/api/v1/audit",
                "/api/v1/usage",
                "/api/v1/usage?module=" + MODULE_URL,
                "/api/v1/alerts",
                "/api/v1/recommendations",
                "/api/v1/admin/secrets")) {
            HttpResponse<String> r = send("GET", base + path, ADMIN, null);
            responses.add("GET " + path + " -> " + r.statusCode() + " " + r.body());
        }
        HttpResponse<String> pids = send("GET", base + "/api/v1/pids", ADMIN, null);
        assertThat(pids.body()).contains("canary-1"); // the response scan sees PID data

        CanaryScanner http = new CanaryScanner(CANARY);
        responses.forEach(body -> http.scan("HTTP " + body.substring(0, Math.min(60, body.length())), body));
        assertThat(http.findings()).as("canary in API responses").isEmpty();
        assertThat(http.scannedSources()).isGreaterThanOrEqualTo(17);

        // ZooKeeper: every node below /pidpool, read with the cluster's identity
        try (CuratorFramework authed = SecurityWorld.curator(zk, ZK_AUTH)) {
            Map<String, byte[]> nodes = SecurityWorld.zkDump(authed, "/");
            CanaryScanner zkScan = new CanaryScanner(CANARY);
            nodes.forEach((path, data) -> {
                zkScan.scan("zk " + path, data);
                zkScan.scan("zk name " + path, path);
            });
            assertThat(zkScan.findings()).as("canary in ZooKeeper").isEmpty();
            pidNodePath = nodes.keySet().stream()
                    .filter(p -> p.endsWith("/canary-1") && p.contains("/modules/"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no PID node in " + nodes.keySet()));
            String pidsNode = pidNodePath.substring(0, pidNodePath.lastIndexOf('/'));
            String modulePath = pidsNode.substring(0, pidsNode.lastIndexOf('/'));
            instanceNodePath = modulePath + "/"
                    + ZkLayout.instanceOfPidsNode(pidsNode.substring(pidsNode.lastIndexOf('/') + 1))
                            .value();
            assertThat(nodes).containsKey(instanceNodePath); // the SDK's ephemeral node
            // the PID node carries the password, sealed (so the walk did read it)
            PidNode node = PidNode.decode(nodes.get(pidNodePath));
            assertThat(server.sealer().open(node.account().secret())).isEqualTo(CANARY);
        }

        // Redis: every key, dumped by type
        RedissonClient scan = SecurityWorld.redisson(redis.url(), REDIS_PASSWORD);
        try {
            CanaryScanner redisScan = new CanaryScanner(CANARY);
            int keys = SecurityWorld.redisDump(scan, redisScan::scan);
            assertThat(keys).as("Redis keys (quota limit, usage)").isPositive();
            assertThat(redisScan.findings()).as("canary in Redis").isEmpty();
        } finally {
            scan.shutdown();
        }

        // database: every column of every table; the sealed columns must hold it sealed only
        CanaryScanner dbScan = new CanaryScanner(CANARY);
        List<String> sealedSeen = new ArrayList<>();
        List<String> tables = SecurityWorld.dbDump(server.database().dataSource(), (column, value) -> {
            dbScan.scan("db " + column, value);
            if (column.endsWith(".SEALED_SECRET") && value != null) {
                sealedSeen.add(column);
                assertThat(server.sealer().open(SealedSecret.decode(value))).isEqualTo(CANARY);
            }
        });
        assertThat(tables).contains("POOL_PID", "OP_PID", "AUDIT_LOG");
        assertThat(sealedSeen).contains("POOL_PID.SEALED_SECRET");
        assertThat(dbScan.findings()).as("canary in the database").isEmpty();

        // logs of server and client so far (after shutdown: again in stop())
        CanaryScanner logScan = new CanaryScanner(CANARY);
        String text = logs.read();
        logScan.scan("log", text);
        assertThat(text).contains("canary-1"); // the capture sees the PID's log lines
        assertThat(logScan.findings())
                .as("canary in the logs (%s)", logs.file())
                .isEmpty();
        // nor any secret of the configuration
        for (String secret : List.of(KEY, ADMIN, REDIS_PASSWORD, ZK_AUTH.substring(ZK_AUTH.indexOf(':') + 1))) {
            CanaryScanner configScan = new CanaryScanner(secret);
            configScan.scan("log", text);
            responses.forEach(body -> configScan.scan("HTTP", body));
            assertThat(configScan.findings())
                    .as("a configured secret in logs or answers")
                    .isEmpty();
        }
    }

    @Test
    @Order(2)
    void everyScanFindsAControlValuePlantedInPlainSight() throws Exception {
        // logs
        log.info("control value {} and {} and {}", CONTROL, b64(CONTROL), hex(CONTROL));
        CanaryScanner logScan = new CanaryScanner(CONTROL);
        logScan.scan("log", logs.read());
        assertThat(logScan.findings()).contains("log [plain]", "log [base64+0]", "log [hex]");

        // ZooKeeper, inside the ACL'd tree
        try (CuratorFramework authed = SecurityWorld.curator(zk, ZK_AUTH)) {
            String root = SecurityWorld.namespaceRoot(CLUSTER);
            authed.create().forPath(root + "/control-plain", CONTROL.getBytes(StandardCharsets.UTF_8));
            authed.create()
                    .forPath(root + "/control-b64", ("x" + b64("ab" + CONTROL)).getBytes(StandardCharsets.UTF_8));
            CanaryScanner zkScan = new CanaryScanner(CONTROL);
            SecurityWorld.zkDump(authed, "/").forEach(zkScan::scan);
            assertThat(zkScan.findings()).anyMatch(f -> f.startsWith(root + "/control-plain [plain]"));
            assertThat(zkScan.findings()).anyMatch(f -> f.startsWith(root + "/control-b64 [base64+2]"));
            authed.delete().forPath(root + "/control-plain");
            authed.delete().forPath(root + "/control-b64");
        }

        // Redis: a string, a hash field and a stream entry
        RedissonClient r = SecurityWorld.redisson(redis.url(), REDIS_PASSWORD);
        try {
            r.getBucket("control:string", org.redisson.client.codec.StringCodec.INSTANCE)
                    .set(CONTROL);
            r.getMap("control:hash", org.redisson.client.codec.StringCodec.INSTANCE)
                    .put("f", hex(CONTROL));
            r.getStream("control:stream", org.redisson.client.codec.StringCodec.INSTANCE)
                    .add(org.redisson.api.stream.StreamAddArgs.entry("k", b64(CONTROL)));
            CanaryScanner redisScan = new CanaryScanner(CONTROL);
            SecurityWorld.redisDump(r, redisScan::scan);
            assertThat(redisScan.findings())
                    .anyMatch(f -> f.startsWith("redis OBJECT control:string [plain]"))
                    .anyMatch(f -> f.startsWith("redis MAP control:hash") && f.endsWith("[hex]"))
                    .anyMatch(f -> f.startsWith("redis STREAM control:stream") && f.endsWith("[base64+0]"));
            r.getKeys().delete("control:string", "control:hash", "control:stream");
        } finally {
            r.shutdown();
        }

        // database: a scratch table, read by the same dump as the real scan
        try (var c = server.database().dataSource().getConnection();
                var st = c.createStatement()) {
            st.execute("CREATE TABLE control_canary (v VARCHAR(200))");
            st.execute("INSERT INTO control_canary VALUES ('" + CONTROL + "')");
        }
        CanaryScanner dbScan = new CanaryScanner(CONTROL);
        SecurityWorld.dbDump(server.database().dataSource(), dbScan::scan);
        assertThat(dbScan.findings()).contains("CONTROL_CANARY.V [plain]");
        try (var c = server.database().dataSource().getConnection();
                var st = c.createStatement()) {
            st.execute("DROP TABLE control_canary");
        }

        // HTTP: a password planted where a response does echo it (a PID id) is found
        CanaryScanner http = new CanaryScanner("canary-1");
        http.scan(
                "GET /api/v1/pids",
                send("GET", base + "/api/v1/pids", ADMIN, null).body());
        assertThat(http.findings()).contains("GET /api/v1/pids [plain]");
    }

    @Test
    @Order(3)
    void zooKeeperTreeIsClosedToClientsWithoutTheClusterIdentity() throws Exception {
        assertThat(pidNodePath).as("set by the canary test").isNotNull();
        String root = SecurityWorld.namespaceRoot(CLUSTER);
        String digest = DigestAuthenticationProvider.generateDigest(ZK_AUTH);
        List<ACL> clusterAcl = List.of(new ACL(ZooDefs.Perms.ALL, new org.apache.zookeeper.data.Id("digest", digest)));
        try (CuratorFramework authed = SecurityWorld.curator(zk, ZK_AUTH)) {
            // the leader's, the SDK's and the servers' nodes all carry the cluster identity only
            assertThat(authed.getACL().forPath(pidNodePath)).isEqualTo(clusterAcl); // leader (raw multi)
            assertThat(authed.getACL().forPath(instanceNodePath)).isEqualTo(clusterAcl); // SDK (ephemeral)
            // every node of the tree, whoever made it (Curator, raw multi, recipes, worker-id slots)
            Map<String, String> wrong = new java.util.TreeMap<>();
            Map<String, byte[]> tree = SecurityWorld.zkDump(authed, root);
            for (String path : tree.keySet()) {
                org.apache.zookeeper.data.Stat stat = new org.apache.zookeeper.data.Stat();
                List<ACL> acl = authed.getACL().storingStatIn(stat).forPath(path);
                if (!acl.equals(clusterAcl)) {
                    wrong.put(path, acl + " czxid=" + stat.getCzxid());
                }
            }
            assertThat(wrong).as("nodes without the cluster ACL").isEmpty();
            assertThat(tree.keySet())
                    .contains(root, root + "/modules", root + "/leader", root + "/epoch", root + "/worker-ids");
            assertThat(authed.getACL().forPath("/pidpool"))
                    .containsExactlyInAnyOrder(
                            clusterAcl.get(0),
                            new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
        }
        for (String identity : new String[] {null, "pidpool:wrong-password"}) {
            try (CuratorFramework outsider = SecurityWorld.curator(zk, identity)) {
                String who = identity == null ? "unauthenticated" : "wrong password";
                assertNoAuth(who + " read", () -> outsider.getData().forPath(pidNodePath));
                assertNoAuth(who + " list", () -> outsider.getChildren().forPath(root));
                assertNoAuth(who + " list modules", () -> outsider.getChildren().forPath(root + "/modules"));
                assertNoAuth(who + " write", () -> outsider.setData().forPath(pidNodePath, new byte[] {1}));
                assertNoAuth(who + " delete", () -> outsider.delete().forPath(pidNodePath));
                assertNoAuth(who + " create", () -> outsider.create().forPath(root + "/modules/intruder", new byte[0]));
                assertNoAuth(who + " exists", () -> outsider.checkExists().forPath(pidNodePath));
                assertNoAuth(who + " write /pidpool", () -> outsider.setData().forPath("/pidpool", new byte[] {1}));
                assertNoAuth(who + " acl /pidpool", () -> outsider.setACL()
                        .withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE)
                        .forPath("/pidpool"));
            }
        }
        // nothing the outsiders tried took effect
        try (CuratorFramework authed = SecurityWorld.curator(zk, ZK_AUTH)) {
            assertThat(authed.checkExists().forPath(root + "/modules/intruder")).isNull();
        }
    }

    @Test
    @Order(4)
    void redisRefusesClientsWithoutThePassword() {
        assertThat(RedisProcess.command(redis.port(), "GET", "anything")).startsWith("-NOAUTH");
        // a server configured with a wrong password does not start, and does not repeat the password
        String wrong = "wrong-" + SecurityWorld.randomHex(6);
        assertThatThrownBy(() -> SecurityWorld.startServer(yaml(ZK_AUTH, wrong)))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(e.field()).isEqualTo("redis.address");
                    assertThat(e.getMessage()).doesNotContain(wrong);
                });
        // an SDK without the password gets no quota ledger
        assertThatThrownBy(() -> {
                    try (PidClient c = PidClient.builder()
                            .connectString(zk.getConnectString())
                            .cluster(CLUSTER)
                            .module(MODULE)
                            .zookeeperAuth(ZK_AUTH)
                            .redisAddress(redis.url())
                            .secretKey(KEY)
                            .startTimeout(Duration.ofSeconds(20))
                            .listener(new PidListener() {
                                @Override
                                public void onAssigned(PidAccount account) {}

                                @Override
                                public void onRevoked(PidAccount account) {}
                            })
                            .build()) {
                        c.start();
                    }
                })
                .isInstanceOf(PidPoolException.class);
    }

    private static void assertNoAuth(String what, ThrowingCall call) {
        assertThatThrownBy(call::run).as(what).isInstanceOf(KeeperException.NoAuthException.class);
    }

    @FunctionalInterface
    interface ThrowingCall {
        void run() throws Exception;
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static String hex(String s) {
        return HexFormat.of().formatHex(s.getBytes(StandardCharsets.UTF_8));
    }
}
