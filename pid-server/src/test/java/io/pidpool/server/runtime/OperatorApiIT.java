package io.pidpool.server.runtime;

import static io.pidpool.server.ItSupport.JSON;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.PidWithModule;
import io.pidpool.core.port.Repositories;
import io.pidpool.server.ItSupport;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.testing.LoopbackZooKeeper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator HTTP API of two real {@link PidServer}s (curator-test ZooKeeper, Redis via {@link
 * RedisSupport}, one shared H2 database): batches posted to the follower are recorded there, the
 * leader is woken through {@code /notify} and applies them, and the follower answers {@code
 * wait=true} requests with DEALED; every refused request answers 4xx with {@code {"error",
 * "field"}}, leaves the database as it was, and is audited; roles and 401/403.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OperatorApiIT {
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String ADMIN = "api-it-admin-token-0123456789";
    static final String OPERATOR = "api-it-operator-token-0123456";
    static final String VIEWER = "api-it-viewer-token-012345678";
    static final String FIN = "fin#risk#scorer";
    static final String OPS = "ops#billing#api";
    static final String FIN_PATH = "fin%23risk%23scorer";
    static final long MAX_BODY = 256 * 1024;
    static final String SECRET = "canary-password-4711";

    final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    LoopbackZooKeeper zk;
    final List<PidServer> servers = new ArrayList<>();
    PidServer leader;
    PidServer follower;
    String leaderBase;
    String followerBase;
    Repositories repos;
    String cluster;

    @BeforeAll
    void start() throws Exception {
        ItSupport.tmpdir();
        zk = new LoopbackZooKeeper();
        String db = "jdbc:h2:mem:api_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1";
        cluster = "api-" + UUID.randomUUID().toString().substring(0, 8);
        for (String id : List.of("api-a", "api-b")) {
            servers.add(new PidServer(config(cluster, db), id).start());
        }
        String leaderId = ItSupport.awaitLeader(base(servers.get(0)), VIEWER);
        leader = servers.stream()
                .filter(s -> s.nodeId().equals(leaderId))
                .findFirst()
                .orElseThrow();
        follower = servers.stream().filter(s -> s != leader).findFirst().orElseThrow();
        leaderBase = base(leader);
        followerBase = base(follower);
        repos = follower.database().repositories(Clock.systemUTC());

        // the fixture: two modules, three PIDs, all through the follower
        assertDealed(send(
                "PUT",
                followerBase + "/api/v1/modules/" + FIN_PATH + "?wait=true",
                OPERATOR,
                json(),
                """
                {"servers": 2, "monthlyDemand": 1000}"""));
        assertDealed(send(
                "PUT",
                followerBase + "/api/v1/modules/ops%23billing%23api?wait=true",
                OPERATOR,
                json(),
                """
                {"servers": 1}"""));
        assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [{"type": "ADD", "module": "%s", "pids": [
                  {"id": "u1", "secret": "%s", "monthlyQuota": 100},
                  {"id": "u2", "secret": "pw-two", "monthlyQuota": 200},
                  {"id": "u3", "secret": "pw-three", "monthlyQuota": 300}]}]}"""
                        .formatted(FIN, SECRET)));
    }

    @AfterAll
    void stop() throws Exception {
        for (int i = servers.size() - 1; i >= 0; i--) {
            servers.get(i).close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    ServerConfig config(String cluster, String db) {
        String yaml =
                """
                cluster: %s
                http: { host: 127.0.0.1, port: 0, maxRequestBytes: %d }
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000, connectionTimeoutMs: 10000 }
                redis: { address: "%s" }
                database: { url: "%s" }
                security:
                  secretKey: "%s"
                  tokens:
                    - { name: root, token: "%s", role: admin }
                    - { name: ops, token: "%s", role: operator }
                    - { name: dashboard, token: "%s", role: viewer }
                worker: { enabled: false }
                """
                        .formatted(
                                cluster,
                                MAX_BODY,
                                zk.connectString(),
                                RedisSupport.sharedUrl(),
                                db,
                                KEY,
                                ADMIN,
                                OPERATOR,
                                VIEWER);
        return new ConfigLoader(Map.of()).load(yaml, "server.yml");
    }

    static String base(PidServer server) {
        return "http://127.0.0.1:" + server.httpPort();
    }

    // ------------------------------------------------------------ the follower path

    @Test
    void everyOperationTypePostedToTheFollowerWithWaitAnswersDealed() throws Exception {
        JsonNode add = assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [{"type": "ADD", "module": "%s", "pids": [
                  {"id": "f1", "secret": "pw-f1", "monthlyQuota": 10},
                  {"id": "f2", "secret": "pw-f2", "monthlyQuota": 20},
                  {"id": "f3", "secret": "pw-f3", "monthlyQuota": 30}]}]}"""
                        .formatted(FIN)));
        assertThat(add.path("requestedBy").asText()).isEqualTo("ops");
        assertThat(add.path("results").get(0).path("ok").asBoolean()).isTrue();

        assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [
                  {"type": "UPDATE", "pids": [{"id": "f1", "secret": "pw-f1b", "monthlyQuota": 11}]},
                  {"type": "MIGRATE", "pids": ["f2"], "to": "%s"},
                  {"type": "RESET_QUOTA", "pids": ["f3"]}]}"""
                        .formatted(OPS)));
        Map<String, PidRecord> now = accounts();
        assertThat(now.get("f1").monthlyQuota()).isEqualTo(11);
        assertThat(now.get("f2").module().toString()).isEqualTo(OPS);

        JsonNode delete = assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [{"type": "DELETE", "pids": ["f1", "f2", "f3"]}]}"""));
        assertThat(accounts()).doesNotContainKeys("f1", "f2", "f3");

        // what the follower accepted is audited together with the batch, by the token's name
        List<AuditEntry> accepted = repos.audit().forTarget(delete.path("id").asText(), 10);
        assertThat(accepted)
                .extracting(AuditEntry::actor, AuditEntry::action)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("ops", "batch.accepted"));
        // and the leader's view agrees
        JsonNode batch = JSON.readTree(
                get(leaderBase + "/api/v1/batches/" + delete.path("id").asText(), VIEWER)
                        .body());
        assertThat(batch.path("status").asText()).isEqualTo("DEALED");
    }

    // ------------------------------------------------------------ idempotency keys

    @Test
    void aRetriedBatchWithTheSameIdempotencyKeyIsTheSameBatchAppliedOnce() {
        String key = "reset-" + UUID.randomUUID();
        String body = ops("{\"type\": \"RESET_QUOTA\", \"pids\": [\"u2\"]}");
        int before = repos.operations().recent(1000).size();

        JsonNode first = assertDealed(postKeyed(followerBase, OPERATOR, key, body));
        // the response was lost; the client retries, here through the other server
        HttpResponse<String> retry = postKeyed(leaderBase, OPERATOR, key, body);
        JsonNode again = assertDealed(retry);

        assertThat(again.path("id").asText()).isEqualTo(first.path("id").asText());
        assertThat(again).isEqualTo(first);
        assertThat(retry.headers().firstValue("Location"))
                .hasValue("/api/v1/batches/" + first.path("id").asText());
        assertThat(repos.operations().recent(1000)).hasSize(before + 1);

        // the same key with another body: refused, nothing changes
        HttpResponse<String> other =
                postKeyed(followerBase, OPERATOR, key, ops("{\"type\": \"RESET_QUOTA\", \"pids\": [\"u3\"]}"));
        assertThat(other.statusCode()).as(other.body()).isEqualTo(409);
        JsonNode error = readTree(other.body());
        assertThat(error.path("field").asText()).isEqualTo("Idempotency-Key");
        assertThat(error.path("error").asText()).contains(first.path("id").asText());
        assertThat(repos.operations().recent(1000)).hasSize(before + 1);

        // keys belong to the token's name: another principal's same key is another batch
        JsonNode admins = assertDealed(postKeyed(followerBase, ADMIN, key, body));
        assertThat(admins.path("id").asText()).isNotEqualTo(first.path("id").asText());
        assertThat(repos.operations().recent(1000)).hasSize(before + 2);
    }

    @Test
    void twoConcurrentSubmissionsWithOneIdempotencyKeyMakeOneBatch() {
        for (int round = 0; round < 5; round++) {
            String key = "twice-" + round + "-" + UUID.randomUUID();
            String body = ops("{\"type\": \"RESET_QUOTA\", \"pids\": [\"u1\"]}");
            int before = repos.operations().recent(1000).size();
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            List<CompletableFuture<HttpResponse<String>>> both = Stream.of(followerBase, leaderBase)
                    .map(base -> CompletableFuture.supplyAsync(() -> {
                        try {
                            go.await();
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        return postKeyed(base, OPERATOR, key, body);
                    }))
                    .toList();
            go.countDown();

            List<String> ids = both.stream()
                    .map(f -> assertDealed(f.join()).path("id").asText())
                    .toList();
            assertThat(ids.get(0)).isEqualTo(ids.get(1));
            assertThat(repos.operations().recent(1000)).hasSize(before + 1);
        }
    }

    @Test
    void aMalformedIdempotencyKeyIsRefusedNamingTheHeader() {
        int before = repos.operations().recent(1000).size();
        for (String bad : List.of("has space", "x".repeat(129), "semi;colon", "a/b")) {
            HttpResponse<String> r =
                    postKeyed(followerBase, OPERATOR, bad, ops("{\"type\": \"RESET_QUOTA\", \"pids\": [\"u1\"]}"));
            assertThat(r.statusCode()).as(bad + ": " + r.body()).isEqualTo(400);
            assertThat(readTree(r.body()).path("field").asText()).isEqualTo("Idempotency-Key");
        }
        assertThat(repos.operations().recent(1000)).hasSize(before);
    }

    HttpResponse<String> postKeyed(String base, String token, String key, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/api/v1/batches?wait=true"))
                .timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + token)
                .header("Content-Type", json())
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body));
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Test
    void concurrentWaitersOnTheFollowerAllGetTheirBatchDealed() {
        List<CompletableFuture<HttpResponse<String>>> posts = IntStream.range(0, 8)
                .mapToObj(i -> CompletableFuture.supplyAsync(() -> post(
                        followerBase,
                        OPERATOR,
                        """
                        {"operations": [{"type": "ADD", "module": "%s", "pids": [
                          {"id": "c%d", "secret": "pw", "monthlyQuota": 5}]}]}"""
                                .formatted(OPS, i))))
                .toList();
        posts.forEach(p -> assertDealed(p.join()));
        // and many clients waiting on one batch (GET ?wait=true) are answered together
        HttpResponse<String> accepted = send(
                "POST",
                followerBase + "/api/v1/batches",
                OPERATOR,
                json(),
                ops("{\"type\": \"DELETE\", \"pids\": [\"c0\",\"c1\",\"c2\",\"c3\",\"c4\",\"c5\",\"c6\",\"c7\"]}"));
        assertThat(accepted.statusCode()).as(accepted.body()).isIn(200, 202);
        String id = readTree(accepted.body()).path("id").asText();
        assertThat(accepted.headers().firstValue("Location")).hasValue("/api/v1/batches/" + id);
        List<CompletableFuture<HttpResponse<String>>> gets = IntStream.range(0, 8)
                .mapToObj(i -> CompletableFuture.supplyAsync(
                        () -> get(followerBase + "/api/v1/batches/" + id + "?wait=true&timeoutMs=20000", VIEWER)))
                .toList();
        gets.forEach(g -> assertDealed(g.join()));
    }

    @Test
    void aRegisteredInstanceMakesItsModuleKnownAndTheViewsShowWhatItHolds() throws Exception {
        String module = "new#team#app";
        String path = "new%23team%23app";
        String body = ops(add(module, "i1", "i2"));
        HttpResponse<String> unknown = post(followerBase, OPERATOR, body);
        assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);

        try (var instance = new io.pidpool.server.testing.SimulatedInstance(
                        zk.connectString(),
                        new io.pidpool.core.protocol.ZkLayout(cluster),
                        io.pidpool.core.model.ModuleKey.parse(module),
                        "sim",
                        new io.pidpool.server.testing.Platform())
                .start()) {
            assertDealed(post(followerBase, OPERATOR, body));
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> instance.held().size() == 2);
            for (String base : List.of(leaderBase, followerBase)) {
                org.awaitility.Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> readTree(get(base + "/api/v1/modules/" + path, VIEWER)
                                                .body())
                                        .path("held")
                                        .asInt()
                                == 2);
                JsonNode view =
                        readTree(get(base + "/api/v1/modules/" + path, VIEWER).body());
                assertThat(view.path("pids").asInt()).isEqualTo(2);
                JsonNode only = view.path("instances").get(0);
                assertThat(only.path("instance").asText())
                        .isEqualTo(instance.id().toString());
                assertThat(only.path("live").asBoolean()).isTrue();
                assertThat(only.path("held").asInt()).isEqualTo(2);
                JsonNode pids = readTree(get(base + "/api/v1/pids?module=" + path + "&state=ADDED", VIEWER)
                                .body())
                        .path("pids");
                assertThat(pids.findValuesAsText("instance"))
                        .containsOnly(instance.id().toString())
                        .hasSize(2);
            }
        }
    }

    @Test
    void readsAnswerOnEveryServer() throws Exception {
        // usage synced to the ledger this month: 7 - 2 on u1, 5 on u2; last month's does not count
        java.time.YearMonth month = java.time.YearMonth.now(java.time.ZoneOffset.UTC);
        java.time.Instant now = java.time.Instant.now();
        var usage = repos.usage();
        usage.recordDeduction(new io.pidpool.core.port.Deduction("read-d1", "u1", "read-sdk", 1, 7, month, now));
        usage.recordDeduction(new io.pidpool.core.port.Deduction("read-d2", "u2", "read-sdk", 2, 5, month, now));
        usage.recordDeduction(
                new io.pidpool.core.port.Deduction("read-d3", "u2", "read-sdk", 3, 50, month.minusMonths(1), now));
        usage.recordRefund(new io.pidpool.core.port.Refund("read-r1", "read-d1", "read-sdk", 4, 2, now));
        for (String base : List.of(leaderBase, followerBase)) {
            JsonNode fin = JSON.readTree(
                    get(base + "/api/v1/modules/" + FIN_PATH, VIEWER).body());
            assertThat(fin.path("used").asLong()).isEqualTo(10);
            assertThat(fin.path("monthlyQuota").asLong()).isEqualTo(600);
            JsonNode u = JSON.readTree(get(base + "/api/v1/pids?module=" + FIN_PATH, VIEWER)
                            .body())
                    .path("pids");
            assertThat(u.get(0).path("used").asLong()).isEqualTo(5);
            assertThat(u.get(1).path("used").asLong()).isEqualTo(5);
            assertThat(u.get(2).path("used").asLong()).isZero();

            JsonNode cluster =
                    JSON.readTree(get(base + "/api/v1/cluster", VIEWER).body());
            assertThat(cluster.path("leader").asText()).isEqualTo(leader.nodeId());
            assertThat(cluster.path("epoch").asLong()).isPositive();
            assertThat(cluster.path("members")).hasSize(2);
            assertThat(cluster.path("health").path("components").fieldNames())
                    .toIterable()
                    .contains("zookeeper", "redis", "database");

            JsonNode module = JSON.readTree(
                    get(base + "/api/v1/modules/" + FIN_PATH, VIEWER).body());
            assertThat(module.path("servers").asInt()).isEqualTo(2);
            assertThat(module.path("pids").asInt()).isGreaterThanOrEqualTo(3);
            assertThat(JSON.readTree(get(base + "/api/v1/modules", VIEWER).body())
                            .path("modules")
                            .findValuesAsText("module"))
                    .contains(FIN, OPS);

            var pids = get(base + "/api/v1/pids?module=" + FIN_PATH + "&limit=2", VIEWER);
            JsonNode page = JSON.readTree(pids.body());
            assertThat(page.path("pids")).hasSize(2);
            assertThat(page.path("pids").get(0).path("id").asText()).isEqualTo("u1");
            assertThat(page.path("next").asText()).isEqualTo("u2");
            assertThat(pids.body()).doesNotContain(SECRET);

            JsonNode history =
                    JSON.readTree(get(base + "/api/v1/batches?limit=2", VIEWER).body());
            assertThat(history.path("batches")).hasSize(2);
            long first = history.path("batches").get(0).path("id").asLong();
            long second = history.path("batches").get(1).path("id").asLong();
            assertThat(first).isGreaterThan(second);
            assertThat(get(base + "/health", null).statusCode()).isEqualTo(200);
            HttpResponse<String> unknown = get(base + "/api/v1/batches/1?wait=true&timeoutMs=100", VIEWER);
            assertThat(unknown.statusCode()).as(unknown.body()).isEqualTo(404);
        }
    }

    // ------------------------------------------------------------ validation: all or nothing

    /** One refused request: what is sent and what must come back. */
    record Bad(String name, String method, String path, String contentType, String body, int status, String field) {
        @Override
        public String toString() {
            return name;
        }
    }

    static String ops(String... operations) {
        return "{\"operations\": [" + String.join(",", operations) + "]}";
    }

    static String add(String module, String... ids) {
        return "{\"type\": \"ADD\", \"module\": \"" + module + "\", \"pids\": ["
                + Stream.of(ids)
                        .map(id -> "{\"id\": \"" + id + "\", \"secret\": \"s-" + id + "\", \"monthlyQuota\": 10}")
                        .collect(Collectors.joining(","))
                + "]}";
    }

    static Stream<Arguments> badRequests() {
        String batches = "/api/v1/batches?wait=true";
        String tooManyOps = ops(IntStream.range(0, 1001)
                .mapToObj(i -> "{\"type\":\"RESET_QUOTA\",\"pids\":[\"u1\"]}")
                .toArray(String[]::new));
        String tooManyPids = ops("{\"type\":\"DELETE\",\"pids\":["
                + IntStream.range(0, 10_001).mapToObj(i -> "\"p" + i + "\"").collect(Collectors.joining(","))
                + "]}");
        String hugeBody = ops(add(FIN, "h1")).replace("s-h1", "x".repeat((int) MAX_BODY));
        return Stream.of(
                        new Bad(
                                "ADD to an unknown module",
                                "POST",
                                batches,
                                null,
                                ops(add("no#such#module", "n1")),
                                404,
                                "operations[0].module"),
                        new Bad(
                                "a PID twice in one operation",
                                "POST",
                                batches,
                                null,
                                ops(add(FIN, "n1", "n1")),
                                400,
                                "operations[0].pids"),
                        new Bad(
                                "a PID in two operations",
                                "POST",
                                batches,
                                null,
                                ops(add(FIN, "n1"), "{\"type\":\"DELETE\",\"pids\":[\"n1\"]}"),
                                400,
                                "operations"),
                        new Bad(
                                "ADD of a PID that exists",
                                "POST",
                                batches,
                                null,
                                ops(add(OPS, "n1", "u2")),
                                409,
                                "operations[0].pids[1].id"),
                        new Bad(
                                "a bad module key",
                                "POST",
                                batches,
                                null,
                                ops(add("not-a-module-key", "n1")),
                                400,
                                "operations[0].module"),
                        new Bad(
                                "a negative quota",
                                "POST",
                                batches,
                                null,
                                ops(add(FIN, "n1").replace("\"monthlyQuota\": 10", "\"monthlyQuota\": -1")),
                                400,
                                "operations[0].pids[0].monthlyQuota"),
                        new Bad(
                                "an absurd quota",
                                "POST",
                                batches,
                                null,
                                ops(add(FIN, "n1").replace("\"monthlyQuota\": 10", "\"monthlyQuota\": 1000000000000")),
                                400,
                                "operations[0].pids[0].monthlyQuota"),
                        new Bad(
                                "a fractional quota",
                                "POST",
                                batches,
                                null,
                                ops(add(FIN, "n1").replace("\"monthlyQuota\": 10", "\"monthlyQuota\": 1.5")),
                                400,
                                "operations[0].pids[0].monthlyQuota"),
                        new Bad(
                                "MIGRATE to the same module",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"MIGRATE\",\"pids\":[\"u1\"],\"to\":\"" + FIN + "\"}"),
                                400,
                                "operations[0].to"),
                        new Bad(
                                "MIGRATE to an unknown module",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"MIGRATE\",\"pids\":[\"u1\"],\"to\":\"no#such#module\"}"),
                                404,
                                "operations[0].to"),
                        new Bad(
                                "MIGRATE of an unknown PID",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"MIGRATE\",\"pids\":[\"nope\"],\"to\":\"" + OPS + "\"}"),
                                404,
                                "operations[0].pids[0]"),
                        new Bad(
                                "UPDATE of an unknown PID",
                                "POST",
                                batches,
                                null,
                                ops(
                                        "{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"nope\",\"secret\":\"s\",\"monthlyQuota\":1}]}"),
                                404,
                                "operations[0].pids[0].id"),
                        new Bad(
                                "DELETE of an unknown PID",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"DELETE\",\"pids\":[\"u1\",\"nope\"]}"),
                                404,
                                "operations[0].pids[1]"),
                        new Bad(
                                "RESET_QUOTA of an unknown PID",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"RESET_QUOTA\",\"pids\":[\"nope\"]}"),
                                404,
                                "operations[0].pids[0]"),
                        new Bad(
                                "a good operation before a bad one",
                                "POST",
                                batches,
                                null,
                                ops(
                                        add(FIN, "n9"),
                                        "{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":7}]}",
                                        "{\"type\":\"DELETE\",\"pids\":[\"nope\"]}"),
                                404,
                                "operations[2].pids[0]"),
                        new Bad(
                                "an unknown operation type",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"EXPLODE\",\"pids\":[\"u1\"]}"),
                                400,
                                "operations[0].type"),
                        new Bad(
                                "an unknown field",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"DELETE\",\"pids\":[\"u1\"],\"force\":true}"),
                                400,
                                "operations[0].force"),
                        new Bad("no operations", "POST", batches, null, ops(), 400, "operations"),
                        new Bad("too many operations", "POST", batches, null, tooManyOps, 400, "operations"),
                        new Bad("too many PIDs", "POST", batches, null, tooManyPids, 400, "operations[0].pids"),
                        new Bad("a body over the byte limit", "POST", batches, null, hugeBody, 413, null),
                        new Bad(
                                "the wrong content type",
                                "POST",
                                batches,
                                "text/plain",
                                ops(add(FIN, "n1")),
                                415,
                                "Content-Type"),
                        new Bad("malformed JSON", "POST", batches, null, "{\"operations\": [", 400, null),
                        new Bad(
                                "a duplicate JSON key",
                                "POST",
                                batches,
                                null,
                                "{\"operations\": [], \"operations\": []}",
                                400,
                                null),
                        new Bad(
                                "a bad wait flag",
                                "POST",
                                "/api/v1/batches?wait=maybe",
                                null,
                                ops(add(FIN, "n1")),
                                400,
                                "wait"),
                        new Bad(
                                "negative servers",
                                "PUT",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                "{\"servers\": -1}",
                                400,
                                "servers"),
                        new Bad(
                                "a negative rebalance delay",
                                "PUT",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                "{\"servers\": 2, \"rebalanceDelayMs\": -1}",
                                400,
                                "rebalanceDelayMs"),
                        new Bad(
                                "a rebalance delay over a day",
                                "PUT",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                "{\"servers\": 2, \"rebalanceDelayMs\": 86400001}",
                                400,
                                "rebalanceDelayMs"),
                        new Bad(
                                "a rebalance delay as text",
                                "PUT",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                "{\"servers\": 2, \"rebalanceDelayMs\": \"60s\"}",
                                400,
                                "rebalanceDelayMs"),
                        new Bad(
                                "module settings as malformed JSON",
                                "PUT",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                "{\"servers\": 2, \"rebalanceDelayMs\": ",
                                400,
                                null),
                        new Bad(
                                "an UPDATE without a secret with a negative quota",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":-1}]}"),
                                400,
                                "operations[0].pids[0].monthlyQuota"),
                        new Bad(
                                "an UPDATE without a secret of an unknown PID",
                                "POST",
                                batches,
                                null,
                                ops("{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"nobody\",\"monthlyQuota\":1}]}"),
                                404,
                                "operations[0].pids[0].id"),
                        new Bad(
                                "acknowledging an unknown alert",
                                "POST",
                                "/api/v1/alerts/12345/ack",
                                null,
                                null,
                                404,
                                "id"),
                        new Bad(
                                "acknowledging a malformed alert id",
                                "POST",
                                "/api/v1/alerts/x1/ack",
                                null,
                                null,
                                400,
                                "id"),
                        new Bad(
                                "a wrong method on a known path",
                                "DELETE",
                                "/api/v1/modules/" + FIN_PATH,
                                null,
                                null,
                                405,
                                null),
                        new Bad(
                                "a bad module key in the path",
                                "PUT",
                                "/api/v1/modules/bad-key",
                                null,
                                "{\"servers\": 1}",
                                400,
                                "module"))
                .map(Arguments::of);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badRequests")
    void aRefusedRequestAnswers4xxWithTheFieldChangesNothingAndIsAudited(Bad bad) throws Exception {
        for (String base : List.of(followerBase, leaderBase)) {
            Snapshot before = snapshot();
            long newestAudit = newestAuditId();
            HttpResponse<String> r = send(
                    bad.method(),
                    base + bad.path(),
                    OPERATOR,
                    bad.contentType() == null ? json() : bad.contentType(),
                    bad.body());

            assertThat(r.statusCode()).as(r.body()).isEqualTo(bad.status());
            JsonNode error = JSON.readTree(r.body());
            assertThat(error.path("error").asText()).as(r.body()).isNotBlank();
            assertThat(error.has("field")).as(r.body()).isTrue();
            assertThat(error.path("field").isNull() ? null : error.path("field").asText())
                    .as(r.body())
                    .isEqualTo(bad.field());
            assertThat(r.body()).doesNotContain("s-n1").doesNotContain(SECRET);

            assertThat(snapshot()).isEqualTo(before);
            List<AuditEntry> audit = repos.audit().recent(5);
            assertThat(audit.get(0).id()).isGreaterThan(newestAudit);
            assertThat(audit.get(0))
                    .satisfies(e -> assertThat(e.action()).isEqualTo("write.rejected"))
                    // a wrong method matches no route, so it is answered before the token is read
                    .satisfies(e -> assertThat(e.actor()).isEqualTo(bad.status() == 405 ? "anonymous" : "ops"))
                    .satisfies(e -> assertThat(e.target()).startsWith(bad.method() + " /api/v1/"))
                    .satisfies(e -> assertThat(e.detail()).startsWith(bad.status() + " "));
        }
    }

    // ------------------------------------------------------------ one PID, quota updates, module delay, routes

    @Test
    void onePidShowsItsStateAndAttributesButNeverItsSecret() throws Exception {
        assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [{"type": "ADD", "module": "%s", "pids": [
                  {"id": "d1", "secret": "%s", "monthlyQuota": 70, "overageAllowance": 5,
                   "attributes": {"region": "eu", "team": "risk"}}]}]}"""
                        .formatted(OPS, SECRET)));
        String sealed = accounts().get("d1").secret().encode();
        for (String base : List.of(followerBase, leaderBase)) {
            HttpResponse<String> r = get(base + "/api/v1/pids/d1", VIEWER);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode pid = JSON.readTree(r.body());
            assertThat(pid.path("id").asText()).isEqualTo("d1");
            assertThat(pid.path("module").asText()).isEqualTo(OPS);
            assertThat(pid.path("status").asText()).isEqualTo("ACTIVE");
            assertThat(pid.path("monthlyQuota").asLong()).isEqualTo(70);
            assertThat(pid.path("overageAllowance").asLong()).isEqualTo(5);
            assertThat(pid.has("instance")).isTrue();
            assertThat(pid.has("nodeState")).isTrue();
            assertThat(pid.has("used")).isTrue();
            assertThat(pid.path("attributes").path("region").asText()).isEqualTo("eu");
            assertThat(r.body()).doesNotContain(SECRET).doesNotContain(sealed).doesNotContainIgnoringCase("secret");
            io.pidpool.server.http.OpenApiDocument doc = io.pidpool.server.http.OpenApiDocument.load();
            assertThat(doc.violations(doc.schema("PidDetail"), pid)).isEmpty();

            HttpResponse<String> unknown = get(base + "/api/v1/pids/nobody-here", VIEWER);
            assertThat(unknown.statusCode()).isEqualTo(404);
            JsonNode error = JSON.readTree(unknown.body());
            assertThat(error.path("field").asText()).isEqualTo("id");
            assertThat(error.path("code").asText()).isEqualTo("NOT_FOUND");
            assertThat(doc.violations(doc.schema("Error"), error)).isEmpty();
        }
    }

    @Test
    void anUpdateWithoutThePasswordChangesQuotaAndAttributesAndKeepsTheSealedSecret() {
        assertDealed(post(
                followerBase,
                OPERATOR,
                """
                {"operations": [{"type": "ADD", "module": "%s", "pids": [
                  {"id": "q1", "secret": "pw-q1", "monthlyQuota": 10, "attributes": {"a": "1"}}]}]}"""
                        .formatted(OPS)));
        PidRecord before = accounts().get("q1");
        assertDealed(
                post(
                        followerBase,
                        OPERATOR,
                        """
                {"operations": [{"type": "UPDATE", "pids": [
                  {"id": "q1", "monthlyQuota": 900, "overageAllowance": 3, "attributes": {"a": "2"}}]}]}"""));
        PidRecord after = accounts().get("q1");
        assertThat(after.monthlyQuota()).isEqualTo(900);
        assertThat(after.overageAllowance()).isEqualTo(3);
        assertThat(after.attributes()).containsExactly(Map.entry("a", "2"));
        assertThat(after.secret()).isEqualTo(before.secret());
        assertThat(leader.sealer().open(after.secret())).isEqualTo("pw-q1");
    }

    @Test
    void aModulesRebalanceDelayIsStoredShownAndResetToTheDefault() throws Exception {
        String path = "/api/v1/modules/ops%23delay%23mod";
        JsonNode set = assertDealed(send(
                "PUT",
                followerBase + path + "?wait=true",
                OPERATOR,
                json(),
                "{\"servers\": 2, \"rebalanceDelayMs\": 1500}"));
        assertThat(set.path("operations").get(0).path("rebalanceDelayMs").asLong())
                .isEqualTo(1500);
        assertThat(repos.modules()
                        .find(io.pidpool.core.model.ModuleKey.parse("ops#delay#mod"))
                        .orElseThrow()
                        .rebalanceDelay())
                .isEqualTo(Duration.ofMillis(1500));
        assertThat(JSON.readTree(get(leaderBase + path, VIEWER).body())
                        .path("rebalanceDelayMs")
                        .asLong())
                .isEqualTo(1500);
        // the stored batch reads back with its delay
        JsonNode batch = JSON.readTree(
                get(leaderBase + "/api/v1/batches/" + set.path("id").asText(), VIEWER)
                        .body());
        assertThat(batch.path("operations").get(0).path("rebalanceDelayMs").asLong())
                .isEqualTo(1500);

        assertDealed(send("PUT", followerBase + path + "?wait=true", OPERATOR, json(), "{\"servers\": 2}"));
        assertThat(repos.modules()
                        .find(io.pidpool.core.model.ModuleKey.parse("ops#delay#mod"))
                        .orElseThrow()
                        .rebalanceDelay())
                .isNull();
        assertThat(JSON.readTree(get(leaderBase + path, VIEWER).body())
                        .path("rebalanceDelayMs")
                        .isNull())
                .isTrue();
    }

    @Test
    void theOpenApiDocumentDescribesExactlyTheRoutesOfARealServer() throws Exception {
        io.pidpool.server.http.OpenApiDocument doc = io.pidpool.server.http.OpenApiDocument.load();
        java.util.Set<String> registered = io.pidpool.server.http.OpenApiDocument.routes(leader.httpRoutes());
        java.util.Set<String> undocumented = new java.util.TreeSet<>(registered);
        undocumented.removeAll(doc.routes());
        java.util.Set<String> stale = new java.util.TreeSet<>(doc.routes());
        stale.removeAll(registered);
        assertThat(undocumented)
                .as("registered but not in /api/v1/openapi.json")
                .isEmpty();
        assertThat(stale).as("in /api/v1/openapi.json but not registered").isEmpty();
        HttpResponse<String> served = get(followerBase + "/api/v1/openapi.json", null);
        assertThat(served.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(served.body())).isEqualTo(doc.root());
    }

    // ------------------------------------------------------------ authentication

    @Test
    void rolesAnswer401And403AndRefusedWritesAreAudited() throws Exception {
        String body = ops(add(FIN, "z1"));
        Snapshot before = snapshot();
        assertThat(get(followerBase + "/api/v1/cluster", null).statusCode()).isEqualTo(401);
        assertThat(get(followerBase + "/api/v1/cluster", "not-a-token").statusCode())
                .isEqualTo(401);
        HttpResponse<String> anonymous = post(followerBase, null, body);
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(anonymous.headers().firstValue("WWW-Authenticate"))
                .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        assertThat(JSON.readTree(anonymous.body()).path("field").asText()).isEqualTo("Authorization");
        assertThat(newestAudit()).satisfies(e -> {
            assertThat(e.actor()).isEqualTo("anonymous");
            assertThat(e.detail()).startsWith("401 UNAUTHENTICATED");
        });
        assertThat(post(followerBase, "wrong-" + OPERATOR, body).statusCode()).isEqualTo(401);

        HttpResponse<String> viewer = post(followerBase, VIEWER, body);
        assertThat(viewer.statusCode()).isEqualTo(403);
        assertThat(newestAudit()).satisfies(e -> {
            assertThat(e.actor()).isEqualTo("dashboard");
            assertThat(e.action()).isEqualTo("write.rejected");
            assertThat(e.detail()).startsWith("403 FORBIDDEN");
        });
        assertThat(send("PUT", followerBase + "/api/v1/modules/" + FIN_PATH, VIEWER, json(), "{\"servers\":3}")
                        .statusCode())
                .isEqualTo(403);
        assertThat(snapshot()).isEqualTo(before);

        // the audit trail: admins only
        assertThat(get(followerBase + "/api/v1/audit", VIEWER).statusCode()).isEqualTo(403);
        assertThat(get(followerBase + "/api/v1/audit", OPERATOR).statusCode()).isEqualTo(403);
        HttpResponse<String> audit = get(followerBase + "/api/v1/audit?limit=3", ADMIN);
        assertThat(audit.statusCode()).isEqualTo(200);
        JsonNode entries = JSON.readTree(audit.body()).path("entries");
        assertThat(entries).hasSize(3);
        assertThat(entries.get(0).path("actor").asText()).isEqualTo("dashboard");
        assertThat(audit.body()).doesNotContain(OPERATOR).doesNotContain(VIEWER);

        // reads: every role; /health: nobody needs a token
        for (String token : List.of(VIEWER, OPERATOR, ADMIN)) {
            assertThat(get(followerBase + "/api/v1/modules", token).statusCode())
                    .isEqualTo(200);
        }
        assertThat(get(followerBase + "/health", null).statusCode()).isEqualTo(200);
    }

    // ------------------------------------------------------------ helpers

    /** Everything a refused request must not change: every table but the audit log. */
    record Snapshot(
            Map<String, Long> rowCounts, List<ModuleConfig> modules, List<PidRecord> pids, List<String> batches) {}

    Snapshot snapshot() throws SQLException {
        Map<String, Long> counts = new LinkedHashMap<>();
        try (Connection c = follower.database().dataSource().getConnection();
                Statement s = c.createStatement()) {
            for (String table : List.of(
                    "pool_module",
                    "pool_module_weight",
                    "pool_pid",
                    "pool_pid_attribute",
                    "pool_assignment",
                    "op_batch",
                    "op_operation",
                    "op_pid",
                    "op_pid_attribute")) {
                try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
                    rs.next();
                    counts.put(table, rs.getLong(1));
                }
            }
        }
        List<PidWithModule> all = repos.pids().loadPidWithModule();
        return new Snapshot(
                counts,
                all.stream().map(PidWithModule::module).toList(),
                all.stream().flatMap(m -> m.pids().stream()).toList(),
                repos.operations().recent(10_000).stream()
                        .map(b -> b.id() + ":" + b.status())
                        .toList());
    }

    Map<String, PidRecord> accounts() {
        return repos.pids().loadPidWithModule().stream()
                .flatMap(m -> m.pids().stream())
                .collect(Collectors.toMap(PidRecord::id, a -> a));
    }

    long newestAuditId() {
        List<AuditEntry> recent = repos.audit().recent(1);
        return recent.isEmpty() ? Long.MIN_VALUE : recent.get(0).id();
    }

    AuditEntry newestAudit() {
        return repos.audit().recent(1).get(0);
    }

    static JsonNode readTree(String body) {
        try {
            return JSON.readTree(body);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String json() {
        return "application/json";
    }

    JsonNode assertDealed(HttpResponse<String> r) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        try {
            JsonNode node = JSON.readTree(r.body());
            assertThat(node.path("status").asText()).as(r.body()).isEqualTo("DEALED");
            return node;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    HttpResponse<String> post(String base, String token, String body) {
        return send("POST", base + "/api/v1/batches?wait=true", token, json(), body);
    }

    HttpResponse<String> get(String url, String token) {
        return send("GET", url, token, null, null);
    }

    HttpResponse<String> send(String method, String url, String token, String contentType, String body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(
                method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
