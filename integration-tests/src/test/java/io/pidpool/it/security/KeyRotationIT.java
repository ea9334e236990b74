package io.pidpool.it.security;

import static io.pidpool.it.security.SecurityWorld.send;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.runtime.PidServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

/**
 * Key rotation end to end with real servers, ZooKeeper, Redis and SDK clients: PIDs sealed under key
 * A; servers restarted with key B current (A still in the ring) and the re-seal triggered through
 * the admin API; the database and the PID nodes then carry B only, the holding client sees its
 * passwords unchanged; finally key A is dropped from servers and clients and a new client still
 * receives every password.
 */
class KeyRotationIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CLUSTER = "rot";
    static final String MODULE = "rot#key#app";
    static final String MODULE_URL = "rot%23key%23app";
    static final String ADMIN = "rot-admin-" + SecurityWorld.randomHex(12);
    static final String OPERATOR = "rot-operator-" + SecurityWorld.randomHex(12);
    static final String KEY_A = SecurityWorld.randomKey();
    static final String KEY_B = SecurityWorld.randomKey();
    static final String ID_A = SecretSealer.keyIdOf(Base64.getDecoder().decode(KEY_A));
    static final Set<String> PIDS = Set.of("r1", "r2", "r3");

    @Test
    void rotateReSealAndDropTheOldKey() throws Exception {
        String db = "jdbc:h2:mem:rot" + SecurityWorld.randomHex(6) + ";DB_CLOSE_DELAY=-1";
        try (TestingServer zk = TestZooKeeper.start();
                RedisProcess redis = RedisProcess.start(false)) {
            String common =
                    """
                    cluster: %s
                    http: { host: 127.0.0.1, port: 0 }
                    zookeeper: { connect: "%s", sessionTimeoutMs: 4000, connectionTimeoutMs: 20000 }
                    redis: { address: "%s" }
                    database: { url: "%s" }
                    worker: { enabled: false }
                    """
                            .formatted(CLUSTER, zk.getConnectString(), redis.url(), db);
            String tokens = "  tokens: [ { name: admin, token: \"" + ADMIN + "\", role: admin },"
                    + " { name: ops, token: \"" + OPERATOR + "\", role: operator } ]\n";

            // 1. one key, as the server's security.secretKey
            Map<String, PidAccount> held1 = new ConcurrentHashMap<>();
            Map<String, String> updated1 = new ConcurrentHashMap<>();
            PidClient client1;
            try (PidServer a =
                    SecurityWorld.startServer(common + "security:\n  secretKey: \"" + KEY_A + "\"\n" + tokens)) {
                String base = "http://127.0.0.1:" + a.httpPort();
                assertThat(send("PUT", base + "/api/v1/modules/" + MODULE_URL + "?wait=true", ADMIN, "{\"servers\":1}")
                                .statusCode())
                        .isEqualTo(200);
                HttpResponse<String> add = send(
                        "POST",
                        base + "/api/v1/batches?wait=true",
                        ADMIN,
                        "{\"operations\":[{\"type\":\"ADD\",\"module\":\"" + MODULE + "\",\"pids\":["
                                + "{\"id\":\"r1\",\"secret\":\"pw-r1\",\"monthlyQuota\":10},"
                                + "{\"id\":\"r2\",\"secret\":\"pw-r2\",\"monthlyQuota\":10},"
                                + "{\"id\":\"r3\",\"secret\":\"pw-r3\",\"monthlyQuota\":10}]}]}");
                assertThat(add.statusCode()).as(add.body()).isEqualTo(200);
                // the SDK gets both keys before the servers rotate
                client1 = client(zk, Map.of(ID_A, KEY_A, "k2", KEY_B), held1, updated1);
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> client1.heldPids().equals(PIDS));
                JsonNode status = json(send("GET", base + "/api/v1/admin/secrets", ADMIN, null));
                assertThat(status.path("currentKeyId").asText()).isEqualTo(ID_A);
                assertThat(status.path("stale").asInt()).isZero();
            }
            try {
                // 2. key B current, A still in the ring; re-seal through the admin API
                try (PidServer b = SecurityWorld.startServer(common + "security:\n  secretKey: \"" + KEY_A
                        + "\"\n  secretKeys: { k2: \"" + KEY_B + "\" }\n  currentKeyId: k2\n" + tokens)) {
                    String base = "http://127.0.0.1:" + b.httpPort();
                    JsonNode before = json(send("GET", base + "/api/v1/admin/secrets", ADMIN, null));
                    assertThat(before.path("currentKeyId").asText()).isEqualTo("k2");
                    assertThat(before.path("accountsByKeyId").path(ID_A).asInt())
                            .isEqualTo(3);
                    assertThat(before.path("stale").asInt()).isEqualTo(3);
                    assertThat(send("POST", base + "/api/v1/admin/secrets/reseal", OPERATOR, null)
                                    .statusCode())
                            .isEqualTo(403);

                    JsonNode report = json(send("POST", base + "/api/v1/admin/secrets/reseal", ADMIN, null));
                    assertThat(report.path("resealed").asInt()).isEqualTo(3);
                    assertThat(report.path("batches")).hasSize(1);
                    String batch = report.path("batches").get(0).asText();
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> json(send("GET", base + "/api/v1/batches/" + batch, ADMIN, null))
                                    .path("status")
                                    .asText()
                                    .equals("DEALED"));
                    JsonNode after = json(send("GET", base + "/api/v1/admin/secrets", ADMIN, null));
                    assertThat(after.path("accountsByKeyId").path("k2").asInt()).isEqualTo(3);
                    assertThat(after.path("accountsByKeyId").has(ID_A)).isFalse();
                    assertThat(after.path("stale").asInt()).isZero();
                    // idempotent: nothing left to do
                    JsonNode again = json(send("POST", base + "/api/v1/admin/secrets/reseal", ADMIN, null));
                    assertThat(again.path("resealed").asInt()).isZero();
                    assertThat(again.path("batches")).isEmpty();

                    // the PID nodes in ZooKeeper now carry key k2, and the holder saw the same passwords
                    try (CuratorFramework c = SecurityWorld.curator(zk, null)) {
                        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                            Map<String, byte[]> nodes =
                                    SecurityWorld.zkDump(c, SecurityWorld.namespaceRoot(CLUSTER) + "/modules");
                            List<PidNode> pidNodes = nodes.entrySet().stream()
                                    .filter(e -> e.getKey().contains("-pids/"))
                                    .map(e -> PidNode.decode(e.getValue()))
                                    .toList();
                            assertThat(pidNodes).hasSize(3);
                            assertThat(pidNodes).allSatisfy(n -> assertThat(
                                            n.account().secret().keyId())
                                    .isEqualTo("k2"));
                        });
                    }
                    await().atMost(Duration.ofSeconds(30))
                            .until(() -> updated1.keySet().equals(PIDS));
                    PIDS.forEach(id -> assertThat(updated1.get(id)).isEqualTo("pw-" + id));
                    assertThat(client1.heldPids()).isEqualTo(PIDS);
                }
            } finally {
                client1.close();
            }

            // 3. key A dropped everywhere: a new client with key B only receives every password
            try (PidServer c = SecurityWorld.startServer(
                    common + "security:\n  secretKeys: { k2: \"" + KEY_B + "\" }\n" + tokens)) {
                String base = "http://127.0.0.1:" + c.httpPort();
                assertThat(json(send("GET", base + "/api/v1/admin/secrets", ADMIN, null))
                                .path("keyIds"))
                        .hasSize(1);
                Map<String, PidAccount> held2 = new ConcurrentHashMap<>();
                try (PidClient client2 = client(zk, Map.of("k2", KEY_B), held2, new ConcurrentHashMap<>())) {
                    await().atMost(Duration.ofSeconds(60))
                            .until(() -> client2.heldPids().equals(PIDS));
                    PIDS.forEach(id -> assertThat(held2.get(id).secret()).isEqualTo("pw-" + id));
                }
            }
        }
    }

    static PidClient client(
            TestingServer zk, Map<String, String> keys, Map<String, PidAccount> held, Map<String, String> updated) {
        PidClient client = PidClient.builder()
                .connectString(zk.getConnectString())
                .cluster(CLUSTER)
                .module(MODULE)
                .secretKeys(keys)
                .sessionTimeout(Duration.ofSeconds(4))
                .listener(new PidListener() {
                    @Override
                    public void onAssigned(PidAccount account) {
                        held.put(account.id(), account);
                    }

                    @Override
                    public void onRevoked(PidAccount account) {
                        held.remove(account.id());
                    }

                    @Override
                    public void onUpdated(PidAccount before, PidAccount after) {
                        updated.put(after.id(), after.secret());
                    }
                })
                .build();
        client.start();
        return client;
    }

    static JsonNode json(HttpResponse<String> response) {
        try {
            assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
            return JSON.readTree(response.body());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
