package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.config.Role;
import io.pidpool.server.config.TokenConfig;
import io.pidpool.server.leader.ReadModel;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * The operator HTTP API against {@link InMemoryOperatorApi}, over loopback HTTP (Jetty on a free
 * port of 127.0.0.1; no other infrastructure).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HttpApiTest {
    static final String VIEWER = "viewer-token-0123456789";
    static final String OPERATOR = "operator-token-0123456789";
    static final String ADMIN = "admin-token-0123456789abc";
    static final long LIMIT = 64 * 1024;
    static final String SECRET = "hunter2-very-secret";

    final InMemoryOperatorApi api = new InMemoryOperatorApi();
    final AtomicReference<HealthCheck.Report> health = new AtomicReference<>();
    final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    HttpApi http;
    String base;

    @BeforeAll
    void start() {
        BearerTokens tokens = BearerTokens.of(List.of(
                new TokenConfig("alice", VIEWER, Role.VIEWER),
                new TokenConfig("bob", OPERATOR, Role.OPERATOR),
                new TokenConfig("root", ADMIN, Role.ADMIN)));
        http = new HttpApi(new HttpApi.Settings("127.0.0.1", 0, LIMIT), api, health::get, tokens).start();
        base = "http://127.0.0.1:" + http.port();
    }

    @AfterAll
    void stop() {
        http.close();
    }

    @BeforeEach
    void reset() {
        api.reset();
        health.set(HealthCheck.Report.of(Map.of(
                "zookeeper", HealthCheck.Component.up("127.0.0.1:2181"),
                "redis", HealthCheck.Component.up("redis://127.0.0.1:6379"))));
    }

    // ------------------------------------------------------------ helpers

    record Answer(int status, JsonNode json, String text, HttpResponse<String> response) {
        String field() {
            return json.path("field").isNull() ? null : json.path("field").asText(null);
        }

        String error() {
            return json.path("error").asText();
        }
    }

    Answer send(String method, String path, String token, String contentType, BodyPublisher body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        b.method(method, body == null ? BodyPublishers.noBody() : body);
        try {
            HttpResponse<String> r = client.send(b.build(), BodyHandlers.ofString());
            JsonNode json = null;
            if (r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) {
                json = ApiJson.MAPPER.readTree(r.body());
            }
            return new Answer(r.statusCode(), json, r.body(), r);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    Answer get(String path, String token) {
        return send("GET", path, token, null, null);
    }

    Answer post(String path, String token, String json) {
        return send("POST", path, token, "application/json", BodyPublishers.ofString(json));
    }

    Answer put(String path, String token, String json) {
        return send("PUT", path, token, "application/json", BodyPublishers.ofString(json));
    }

    static String addBatch(String... ids) {
        StringBuilder pids = new StringBuilder();
        for (String id : ids) {
            if (pids.length() > 0) {
                pids.append(',');
            }
            pids.append("{\"id\":\"")
                    .append(id)
                    .append("\",\"secret\":\"")
                    .append(SECRET)
                    .append("\",\"monthlyQuota\":10000}");
        }
        return "{\"operations\":[{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\",\"pids\":[" + pids + "]}]}";
    }

    void assertBadRequest(Answer a, String field) {
        assertThat(a.status()).as(a.text()).isEqualTo(400);
        assertThat(a.json()).as("JSON error body").isNotNull();
        assertThat(a.field()).as(a.text()).isEqualTo(field);
        assertThat(a.error()).isNotBlank();
        assertThat(a.json().path("code").asText()).isEqualTo("INVALID_ARGUMENT");
        assertThat(api.submitted).as("a rejected request changes nothing").isEmpty();
    }

    // ------------------------------------------------------------ tests

    @Nested
    class Authentication {
        @Test
        void missingTokenIs401WithChallenge() {
            Answer a = get("/api/v1/cluster", null);
            assertThat(a.status()).isEqualTo(401);
            assertThat(a.response().headers().firstValue("WWW-Authenticate"))
                    .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
            assertThat(a.field()).isEqualTo("Authorization");
            assertThat(a.json().path("code").asText()).isEqualTo("UNAUTHENTICATED");
        }

        @Test
        void invalidTokenIs401() {
            assertThat(get("/api/v1/cluster", "not-a-token-0123456789").status())
                    .isEqualTo(401);
            assertThat(get("/api/v1/cluster", VIEWER + "x").status()).isEqualTo(401);
        }

        @Test
        void otherSchemeIs401() {
            Answer a = send("GET", "/api/v1/cluster", null, null, null); // no header at all
            assertThat(a.status()).isEqualTo(401);
            HttpRequest basic = HttpRequest.newBuilder(URI.create(base + "/api/v1/cluster"))
                    .header("Authorization", "Basic " + VIEWER)
                    .build();
            try {
                assertThat(client.send(basic, BodyHandlers.ofString()).statusCode())
                        .isEqualTo(401);
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        }

        @Test
        void unauthenticatedWriteIs401AndChangesNothing() {
            Answer a = post("/api/v1/batches", null, addBatch("u1"));
            assertThat(a.status()).isEqualTo(401);
            assertThat(api.submitted).isEmpty();
        }

        @Test
        void viewerMayReadButNotWrite() {
            assertThat(get("/api/v1/cluster", VIEWER).status()).isEqualTo(200);
            assertThat(get("/api/v1/modules", VIEWER).status()).isEqualTo(200);
            assertThat(get("/api/v1/pids", VIEWER).status()).isEqualTo(200);

            Answer post = post("/api/v1/batches", VIEWER, addBatch("u1"));
            assertThat(post.status()).isEqualTo(403);
            assertThat(post.json().path("code").asText()).isEqualTo("FORBIDDEN");
            assertThat(post.error()).contains("viewer");
            Answer put = put("/api/v1/modules/fin%23risk%23scorer", VIEWER, "{\"servers\":4}");
            assertThat(put.status()).isEqualTo(403);
            assertThat(api.submitted).isEmpty();
        }

        @Test
        void operatorAndAdminMayWrite() {
            assertThat(post("/api/v1/batches", OPERATOR, addBatch("u1")).status())
                    .isEqualTo(202);
            assertThat(post("/api/v1/batches", ADMIN, addBatch("u2")).status()).isEqualTo(202);
            assertThat(api.submitted)
                    .extracting(InMemoryOperatorApi.Submission::requestedBy)
                    .containsExactly("bob", "root");
        }

        @Test
        void healthAndConsoleArePublic() {
            Answer health = get("/health", null);
            assertThat(health.status()).isEqualTo(200);
            assertThat(health.json().path("status").asText()).isEqualTo("UP");
            assertThat(health.json()
                            .path("components")
                            .path("zookeeper")
                            .path("status")
                            .asText())
                    .isEqualTo("UP");

            Answer console = get("/", null);
            assertThat(console.status()).isEqualTo(200);
            assertThat(console.text()).contains("PidPool");
        }
    }

    @Nested
    class AuditAndHistory {
        @Test
        void refusedWritesReachTheAuditTrailWithWhoWhatAndWhyButNoSecret() {
            post("/api/v1/batches", null, addBatch("u1"));
            post("/api/v1/batches", VIEWER, addBatch("u1"));
            post("/api/v1/batches", OPERATOR, addBatch("u1").replace("10000", "-5"));
            send("POST", "/api/v1/batches", OPERATOR, "text/plain", BodyPublishers.ofString(addBatch("u1")));
            put("/api/v1/modules/fin%23risk%23scorer", "wrong-token-0123456789", "{\"servers\":2}");

            assertThat(api.rejections)
                    .extracting(RejectedWrite::actor, RejectedWrite::status, RejectedWrite::code)
                    .containsExactly(
                            org.assertj.core.groups.Tuple.tuple("anonymous", 401, "UNAUTHENTICATED"),
                            org.assertj.core.groups.Tuple.tuple("alice", 403, "FORBIDDEN"),
                            org.assertj.core.groups.Tuple.tuple("bob", 400, "INVALID_ARGUMENT"),
                            org.assertj.core.groups.Tuple.tuple("bob", 415, "UNSUPPORTED_MEDIA_TYPE"),
                            org.assertj.core.groups.Tuple.tuple("anonymous", 401, "UNAUTHENTICATED"));
            RejectedWrite quota = api.rejections.get(2);
            assertThat(quota.target()).isEqualTo("POST /api/v1/batches");
            assertThat(quota.field()).isEqualTo("operations[0].pids[0].monthlyQuota");
            assertThat(quota.detail()).startsWith("400 INVALID_ARGUMENT operations[0].pids[0].monthlyQuota: ");
            assertThat(quota.remote()).isEqualTo("127.0.0.1");
            assertThat(api.rejections.get(4).target()).isEqualTo("PUT /api/v1/modules/fin%23risk%23scorer");
            assertThat(api.rejections)
                    .allSatisfy(
                            r -> assertThat(r.detail()).doesNotContain(SECRET).doesNotContain("wrong-token"));
            assertThat(api.submitted).isEmpty();
        }

        @Test
        void aWriteToNoRouteIsAuditedToo() {
            Answer a = post("/api/v1/nothing-here", OPERATOR, "{}");
            assertThat(a.status()).isEqualTo(404);
            assertThat(api.rejections)
                    .extracting(RejectedWrite::target, RejectedWrite::status)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("POST /api/v1/nothing-here", 404));
        }

        @Test
        void waitingOnAnUnknownBatchIs404() {
            Answer a = get("/api/v1/batches/12345?wait=true", VIEWER);
            assertThat(a.status()).isEqualTo(404);
            assertThat(a.field()).isEqualTo("id");
        }

        @Test
        void refusedReadsAndAcceptedWritesAreNotRejections() {
            get("/api/v1/cluster", null);
            get("/api/v1/pids?limit=0", VIEWER);
            post("/api/v1/batches", OPERATOR, addBatch("u1"));
            assertThat(api.rejections).isEmpty();
        }

        @Test
        void theAuditTrailIsForAdminsOnly() {
            post("/api/v1/batches", VIEWER, addBatch("u1"));
            assertThat(get("/api/v1/audit", null).status()).isEqualTo(401);
            assertThat(get("/api/v1/audit", VIEWER).status()).isEqualTo(403);
            Answer operator = get("/api/v1/audit", OPERATOR);
            assertThat(operator.status()).isEqualTo(403);
            assertThat(operator.error()).contains("needs admin");

            Answer admin = get("/api/v1/audit?limit=10", ADMIN);
            assertThat(admin.status()).isEqualTo(200);
            JsonNode entries = admin.json().path("entries");
            // the two refused reads of the audit trail are not writes: one entry, alice's POST
            assertThat(entries).hasSize(1);
            assertThat(entries.get(0).path("actor").asText()).isEqualTo("alice");
            assertThat(entries.get(0).path("action").asText()).isEqualTo("write.rejected");
            assertThat(entries.get(0).path("target").asText()).isEqualTo("POST /api/v1/batches");
            assertThat(entries.get(0).path("id").isTextual()).isTrue();
            assertThat(get("/api/v1/audit?limit=0", ADMIN).field()).isEqualTo("limit");
        }

        @Test
        void theAuditTrailIsReadInPagesWithoutGapsOrRepeats() {
            for (int i = 0; i < 5; i++) {
                post("/api/v1/batches", VIEWER, addBatch("u" + i)); // refused: one entry each
            }
            java.util.List<String> seen = new java.util.ArrayList<>();
            String before = null;
            for (int page = 0; page < 5; page++) {
                Answer a = get("/api/v1/audit?limit=2" + (before == null ? "" : "&before=" + before), ADMIN);
                assertThat(a.status()).as(a.text()).isEqualTo(200);
                a.json().path("entries").forEach(e -> seen.add(e.path("id").asText()));
                before = a.json().path("next").isNull()
                        ? null
                        : a.json().path("next").asText();
                if (before == null) {
                    break;
                }
            }
            assertThat(seen).containsExactly("5", "4", "3", "2", "1");
            Answer bad = get("/api/v1/audit?before=newest", ADMIN);
            assertThat(bad.status()).isEqualTo(400);
            assertThat(bad.field()).isEqualTo("before");
        }

        @Test
        void batchHistoryIsNewestFirstWithoutPidLists() {
            post("/api/v1/batches", OPERATOR, addBatch("u1", "u2"));
            put("/api/v1/modules/fin%23risk%23scorer", OPERATOR, "{\"servers\":3}");
            Answer a = get("/api/v1/batches?limit=5", VIEWER);
            assertThat(a.status()).isEqualTo(200);
            JsonNode batches = a.json().path("batches");
            assertThat(batches).hasSize(2);
            assertThat(batches.get(0).path("operations").get(0).path("type").asText())
                    .isEqualTo("SET_SERVERS");
            assertThat(batches.get(0).path("operations").get(0).path("servers").asInt())
                    .isEqualTo(3);
            assertThat(batches.get(1).path("operations").get(0).path("pids").asInt())
                    .isEqualTo(2);
            assertThat(batches.get(1).path("requestedBy").asText()).isEqualTo("bob");
            assertThat(a.text()).doesNotContain(SECRET).doesNotContain("\"u1\"");
            assertThat(get("/api/v1/batches?limit=1", VIEWER).json().path("batches"))
                    .hasSize(1);
            assertThat(get("/api/v1/batches?limit=501", VIEWER).field()).isEqualTo("limit");
        }

        @Test
        void getWithWaitAnswersWhenTheBatchIsDealt() throws Exception {
            api.completeOnAwait = false;
            String id = post("/api/v1/batches", OPERATOR, addBatch("u1"))
                    .json()
                    .path("id")
                    .asText();
            var pending = new CompletableFuture<BatchRecord>();
            api.nextAwait.set(pending);
            CompletableFuture<Answer> waiting = CompletableFuture.supplyAsync(
                    () -> get("/api/v1/batches/" + id + "?wait=true&timeoutMs=60000", VIEWER));
            await().atMost(Duration.ofSeconds(30)).until(() -> api.nextAwait.get() == null);
            assertThat(waiting).isNotDone();
            pending.complete(api.dealt(api.lastId()));
            Answer a = waiting.get(30, TimeUnit.SECONDS);
            assertThat(a.status()).isEqualTo(200);
            assertThat(a.json().path("status").asText()).isEqualTo("DEALED");
            assertThat(get("/api/v1/batches/" + id + "?wait=sometimes", VIEWER).field())
                    .isEqualTo("wait");
        }
    }

    @Test
    void metricsRouteIsOpenOrNeedsATokenAsConfigured() {
        BearerTokens tokens = BearerTokens.of(List.of(new TokenConfig("alice", VIEWER, Role.VIEWER)));
        for (boolean requireToken : new boolean[] {false, true}) {
            try (HttpApi metrics = new HttpApi(new HttpApi.Settings("127.0.0.1", 0, LIMIT, requireToken), tokens)
                    .with(routes -> routes.metrics("/metrics", ctx -> ctx.result("pidpool_up 1")))
                    .start()) {
                String url = "http://127.0.0.1:" + metrics.port() + "/metrics";
                HttpRequest open = HttpRequest.newBuilder(URI.create(url)).build();
                HttpRequest withToken = HttpRequest.newBuilder(URI.create(url))
                        .header("Authorization", "Bearer " + VIEWER)
                        .build();
                assertThat(client.send(open, BodyHandlers.ofString()).statusCode())
                        .isEqualTo(requireToken ? 401 : 200);
                assertThat(client.send(withToken, BodyHandlers.ofString()).body())
                        .isEqualTo("pidpool_up 1");
            } catch (IOException | InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void routesCannotBeAddedOnceStarted() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> http.with(routes -> {}))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("before the HTTP API starts");
    }

    @Test
    void healthIs503WhenAComponentIsDown() {
        health.set(HealthCheck.Report.of(Map.of(
                "zookeeper",
                HealthCheck.Component.up("ok"),
                "redis",
                HealthCheck.Component.down("connection refused"))));
        Answer a = get("/health", null);
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.json().path("status").asText()).isEqualTo("DOWN");
        assertThat(a.json().path("components").path("redis").path("detail").asText())
                .isEqualTo("connection refused");
    }

    @Test
    void clusterShowsLeaderEpochMembersAndHealth() {
        Answer a = get("/api/v1/cluster", VIEWER);
        assertThat(a.status()).isEqualTo(200);
        assertThat(a.json().path("cluster").asText()).isEqualTo("default");
        assertThat(a.json().path("leader").asText()).isEqualTo("server-1");
        assertThat(a.json().path("epoch").asLong()).isEqualTo(3);
        assertThat(a.json().path("self").asText()).isEqualTo("server-1");
        assertThat(a.json().path("members").get(0).path("leader").asBoolean()).isTrue();
        assertThat(a.json().path("health").path("status").asText()).isEqualTo("UP");
    }

    @Nested
    class Batches {
        @Test
        void acceptedBatchAnswers202WithLocationAndNoSecret() {
            int reads = api.batchReads.get();
            Answer a = post("/api/v1/batches", OPERATOR, addBatch("u1", "u2"));
            assertThat(a.status()).isEqualTo(202);
            String id = a.json().path("id").asText();
            assertThat(a.response().headers().firstValue("Location")).hasValue("/api/v1/batches/" + id);
            assertThat(a.json().path("status").asText()).isEqualTo("PENDING");
            assertThat(a.json().path("requestedBy").asText()).isEqualTo("bob");
            assertThat(a.json().path("operations").get(0).path("type").asText()).isEqualTo("ADD");
            assertThat(a.json().path("operations").get(0).path("module").asText())
                    .isEqualTo("fin#risk#scorer");
            assertThat(a.text()).doesNotContain(SECRET);
            assertThat(api.batchReads).as("answered as recorded, not read back").hasValue(reads);

            Operation.Add<String> add =
                    (Operation.Add<String>) api.submitted.get(0).operations().get(0);
            assertThat(add.module()).isEqualTo(ModuleKey.parse("fin#risk#scorer"));
            assertThat(add.pids())
                    .containsExactly(
                            new PidSpec<>("u1", SECRET, 10000, 0, Map.of()),
                            new PidSpec<>("u2", SECRET, 10000, 0, Map.of()));
        }

        @Test
        void waitTrueAnswers200WithTheFinalBatch() {
            Answer a = post("/api/v1/batches?wait=true&timeoutMs=5000", OPERATOR, addBatch("u1"));
            assertThat(a.status()).isEqualTo(200);
            assertThat(a.json().path("status").asText()).isEqualTo("DEALED");
            assertThat(a.json().path("results").get(0).path("ok").asBoolean()).isTrue();
        }

        @Test
        void waitThatTimesOutAnswers202WithTheCurrentState() {
            api.completeOnAwait = false;
            Answer a = post("/api/v1/batches?wait=true&timeoutMs=10", OPERATOR, addBatch("u1"));
            assertThat(a.status()).isEqualTo(202);
            assertThat(a.json().path("status").asText()).isEqualTo("PENDING");
        }

        @Test
        void aWaitingRequestIsAnsweredWhenTheBatchCompletesLater() throws Exception {
            CompletableFuture<BatchRecord> outcome = new CompletableFuture<>();
            api.nextAwait.set(outcome);
            HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/api/v1/batches?wait=true"))
                    .header("Authorization", "Bearer " + OPERATOR)
                    .header("Content-Type", "application/json")
                    .POST(BodyPublishers.ofString(addBatch("u1")))
                    .build();
            CompletableFuture<HttpResponse<String>> response = client.sendAsync(request, BodyHandlers.ofString());
            await().atMost(Duration.ofSeconds(10)).until(() -> api.nextAwait.get() == null);
            assertThat(response).isNotDone();

            outcome.complete(api.dealt(api.lastId()));
            HttpResponse<String> answer = response.get(10, TimeUnit.SECONDS);
            assertThat(answer.statusCode()).isEqualTo(200);
            assertThat(ApiJson.MAPPER.readTree(answer.body()).path("status").asText())
                    .isEqualTo("DEALED");
        }

        @Test
        void aWaitThatFailsIsMappedLikeEveryError() {
            api.nextAwait.set(CompletableFuture.failedFuture(PidPoolException.unavailable("database down", null)));
            Answer a = post("/api/v1/batches?wait=true", OPERATOR, addBatch("u1"));
            assertThat(a.status()).isEqualTo(503);
            assertThat(a.json().path("code").asText()).isEqualTo("UNAVAILABLE");
            assertThat(a.error()).isEqualTo("database down");
        }

        @Test
        void everyOperationTypeMapsOntoItsCoreRecord() {
            String body =
                    """
                    {"operations":[
                      {"type":"ADD","module":"fin#risk#scorer","pids":[{"id":"a1","secret":"s1","monthlyQuota":5,
                        "overageAllowance":2,"attributes":{"region":"eu"}}]},
                      {"type":"UPDATE","pids":[{"id":"b1","secret":"s2","monthlyQuota":7}]},
                      {"type":"DELETE","pids":["c1","c2"]},
                      {"type":"MIGRATE","pids":["d1"],"to":"ops#chat#bot"},
                      {"type":"RESET_QUOTA","pids":["e1"]},
                      {"type":"SET_SERVERS","module":"ops#chat#bot","servers":3,"monthlyDemand":900}
                    ]}""";
            Answer a = post("/api/v1/batches", ADMIN, body);
            assertThat(a.status()).as(a.text()).isEqualTo(202);
            assertThat(api.submitted.get(0).operations())
                    .containsExactly(
                            new Operation.Add<>(
                                    ModuleKey.parse("fin#risk#scorer"),
                                    List.of(new PidSpec<>("a1", "s1", 5, 2, Map.of("region", "eu")))),
                            new Operation.Update<>(List.of(new PidSpec<>("b1", "s2", 7, 0, Map.of()))),
                            new Operation.Delete<>(List.of("c1", "c2")),
                            new Operation.Migrate<>(List.of("d1"), ModuleKey.parse("ops#chat#bot")),
                            new Operation.ResetQuota<>(List.of("e1")),
                            new Operation.SetServers<>(ModuleKey.parse("ops#chat#bot"), 3, 900));
            JsonNode ops = a.json().path("operations");
            assertThat(ops.get(3).path("to").asText()).isEqualTo("ops#chat#bot");
            assertThat(ops.get(5).path("servers").asInt()).isEqualTo(3);
            assertThat(ops.get(2).path("pids").toString()).isEqualTo("[\"c1\",\"c2\"]");
        }

        @Test
        void getBatchByIdAndUnknownOrMalformedIds() {
            String id = post("/api/v1/batches", OPERATOR, addBatch("u1"))
                    .json()
                    .path("id")
                    .asText();
            Answer found = get("/api/v1/batches/" + id, VIEWER);
            assertThat(found.status()).isEqualTo(200);
            assertThat(found.json().path("id").asText()).isEqualTo(id);

            Answer unknown = get("/api/v1/batches/42", VIEWER);
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.field()).isEqualTo("id");

            Answer malformed = get("/api/v1/batches/abc", VIEWER);
            assertThat(malformed.status()).isEqualTo(400);
            assertThat(malformed.field()).isEqualTo("id");
        }
    }

    static Stream<Arguments> invalidBatches() {
        String pid = "{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":1}";
        String add = "{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\",\"pids\":[%s]}";
        return Stream.of(
                Arguments.of("{}", "operations"),
                Arguments.of("{\"operations\":[]}", "operations"),
                Arguments.of("{\"operations\":\"x\"}", "operations"),
                Arguments.of("{\"operations\":null}", "operations"),
                Arguments.of("{\"operations\":[" + add.formatted(pid) + "],\"extra\":1}", "extra"),
                Arguments.of("{\"operations\":[{\"module\":\"a#b#c\",\"pids\":[" + pid + "]}]}", "operations[0].type"),
                Arguments.of("{\"operations\":[{\"type\":\"FOO\"}]}", "operations[0].type"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"add\",\"module\":\"a#b#c\",\"pids\":[]}]}", "operations[0].type"),
                Arguments.of("{\"operations\":[7]}", "operations[0]"),
                Arguments.of("{\"operations\":[{\"type\":\"ADD\",\"pids\":[" + pid + "]}]}", "operations[0].module"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"ADD\",\"module\":\"a#b\",\"pids\":[" + pid + "]}]}",
                        "operations[0].module"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"ADD\",\"module\":\"a#b#c d\",\"pids\":[" + pid + "]}]}",
                        "operations[0].module"),
                Arguments.of("{\"operations\":[" + add.formatted("") + "]}", "operations[0].pids"),
                Arguments.of("{\"operations\":[{\"type\":\"ADD\",\"module\":\"a#b#c\"}]}", "operations[0].pids"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"monthlyQuota\":1}") + "]}",
                        "operations[0].pids[0].secret"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":5,\"monthlyQuota\":1}") + "]}",
                        "operations[0].pids[0].secret"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":\"\",\"monthlyQuota\":1}")
                                + "]}",
                        "operations[0].pids[0].secret"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":\"s\"}") + "]}",
                        "operations[0].pids[0].monthlyQuota"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":-1}")
                                + "]}",
                        "operations[0].pids[0].monthlyQuota"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":1.5}")
                                + "]}",
                        "operations[0].pids[0].monthlyQuota"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":\"9\"}")
                                + "]}",
                        "operations[0].pids[0].monthlyQuota"),
                Arguments.of(
                        "{\"operations\":["
                                + add.formatted(
                                        "{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":99999999999999999999}")
                                + "]}",
                        "operations[0].pids[0].monthlyQuota"),
                Arguments.of(
                        "{\"operations\":["
                                + add.formatted("{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":1,"
                                        + "\"overageAllowance\":-5}")
                                + "]}",
                        "operations[0].pids[0].overageAllowance"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"u1\",\"password\":\"s\",\"monthlyQuota\":1}")
                                + "]}",
                        "operations[0].pids[0].password"),
                Arguments.of(
                        "{\"operations\":[" + add.formatted("{\"id\":\"a/b\",\"secret\":\"s\",\"monthlyQuota\":1}")
                                + "]}",
                        "operations[0].pids[0].id"),
                Arguments.of(
                        "{\"operations\":["
                                + add.formatted("{\"id\":\"u1\",\"secret\":\"s\",\"monthlyQuota\":1,"
                                        + "\"attributes\":{\"k\":1}}")
                                + "]}",
                        "operations[0].pids[0].attributes.k"),
                Arguments.of("{\"operations\":[" + add.formatted(pid + "," + pid) + "]}", "operations[0].pids"),
                Arguments.of("{\"operations\":[{\"type\":\"DELETE\",\"pids\":[\"u1\",3]}]}", "operations[0].pids[1]"),
                Arguments.of("{\"operations\":[{\"type\":\"DELETE\",\"pids\":[\"a b\"]}]}", "operations[0].pids"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"DELETE\",\"module\":\"a#b#c\",\"pids\":[\"u1\"]}]}",
                        "operations[0].module"),
                Arguments.of("{\"operations\":[{\"type\":\"MIGRATE\",\"pids\":[\"u1\"]}]}", "operations[0].to"),
                Arguments.of("{\"operations\":[{\"type\":\"UPDATE\",\"pids\":\"u1\"}]}", "operations[0].pids"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"SET_SERVERS\",\"module\":\"a#b#c\",\"servers\":0}]}",
                        "operations[0].servers"),
                Arguments.of(
                        "{\"operations\":[{\"type\":\"SET_SERVERS\",\"module\":\"a#b#c\",\"servers\":2,"
                                + "\"monthlyDemand\":-1}]}",
                        "operations[0].monthlyDemand"),
                // a PID in two operations: the batch-wide rule
                Arguments.of(
                        "{\"operations\":[" + add.formatted(pid) + ",{\"type\":\"DELETE\",\"pids\":[\"u1\"]}]}",
                        "operations"),
                // the first operation is fine, the second is not: nothing is submitted
                Arguments.of(
                        "{\"operations\":[" + add.formatted(pid) + ",{\"type\":\"RESET_QUOTA\",\"pids\":[]}]}",
                        "operations[1].pids"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("invalidBatches")
    void invalidBatchIs400NamingTheField(String body, String field) {
        assertBadRequest(post("/api/v1/batches", OPERATOR, body), field);
    }

    @Test
    void badQueryParametersOfABatchAre400AndChangeNothing() {
        assertBadRequest(post("/api/v1/batches?wait=maybe", OPERATOR, addBatch("u1")), "wait");
        assertBadRequest(post("/api/v1/batches?wait=true&timeoutMs=0", OPERATOR, addBatch("u1")), "timeoutMs");
        assertBadRequest(post("/api/v1/batches?wait=true&timeoutMs=x", OPERATOR, addBatch("u1")), "timeoutMs");
        assertBadRequest(post("/api/v1/batches?wait=true&timeoutMs=999999999", OPERATOR, addBatch("u1")), "timeoutMs");
    }

    @Nested
    class MalformedBodies {
        @Test
        void syntaxErrorsAre400WithoutEchoingTheInput() {
            for (String body : List.of(
                    "{",
                    "{\"operations\":[{\"type\":\"ADD\",\"module\":\"a#b#c\",\"pids\":[{\"id\":\"u1\",\"secret\":"
                            + SECRET + "}]}]}",
                    "{\"operations\":[],\"operations\":[]}",
                    "{} {}",
                    "[]",
                    "\"text\"",
                    "null")) {
                Answer a = post("/api/v1/batches", OPERATOR, body);
                assertThat(a.status()).as(body).isEqualTo(400);
                assertThat(a.json()).as(body).isNotNull();
                assertThat(a.text()).doesNotContain(SECRET).doesNotContain("hunter2");
            }
            assertThat(api.submitted).isEmpty();
        }

        @Test
        void malformedJsonSaysWhere() {
            Answer a = post("/api/v1/batches", OPERATOR, "{\n  \"operations\": [,]\n}");
            assertThat(a.status()).isEqualTo(400);
            assertThat(a.error()).startsWith("malformed JSON at line 2");
        }

        @Test
        void emptyBodyIs400() {
            Answer a = send("POST", "/api/v1/batches", OPERATOR, "application/json", BodyPublishers.noBody());
            assertThat(a.status()).isEqualTo(400);
            assertThat(a.error()).contains("empty");
        }

        @Test
        void wrongOrMissingContentTypeIs415() {
            Answer text =
                    send("POST", "/api/v1/batches", OPERATOR, "text/plain", BodyPublishers.ofString(addBatch("u1")));
            assertThat(text.status()).isEqualTo(415);
            assertThat(text.field()).isEqualTo("Content-Type");
            Answer lookalike = send(
                    "POST", "/api/v1/batches", OPERATOR, "application/jsonx", BodyPublishers.ofString(addBatch("u1")));
            assertThat(lookalike.status()).isEqualTo(415);
            Answer none = send("POST", "/api/v1/batches", OPERATOR, null, BodyPublishers.ofString(addBatch("u1")));
            assertThat(none.status()).isEqualTo(415);
            Answer withCharset = send(
                    "POST",
                    "/api/v1/batches",
                    OPERATOR,
                    "application/json; charset=utf-8",
                    BodyPublishers.ofString(addBatch("u1")));
            assertThat(withCharset.status()).isEqualTo(202);
            assertThat(api.submitted).hasSize(1);
        }

        @Test
        void oversizedBodyIs413WithOrWithoutContentLength() {
            String big = "{\"operations\":[],\"pad\":\"" + "x".repeat((int) LIMIT) + "\"}";
            Answer declared = post("/api/v1/batches", OPERATOR, big);
            assertThat(declared.status()).isEqualTo(413);
            assertThat(declared.json().path("code").asText()).isEqualTo("PAYLOAD_TOO_LARGE");

            byte[] bytes = big.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            Answer chunked = send(
                    "POST",
                    "/api/v1/batches",
                    OPERATOR,
                    "application/json",
                    BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes)));
            assertThat(chunked.status()).isEqualTo(413);
            assertThat(api.submitted).isEmpty();
        }

        @Test
        void bodyJustUnderTheLimitIsRead() {
            String body = addBatch("u1");
            String padded = body.substring(0, body.length() - 1) + " ".repeat((int) LIMIT - body.length()) + "}";
            assertThat(padded.length()).isEqualTo((int) LIMIT);
            assertThat(post("/api/v1/batches", OPERATOR, padded).status()).isEqualTo(202);
        }
    }

    @Nested
    class Modules {
        @Test
        void putRecordsASetServersOperation() {
            Answer a = put(
                    "/api/v1/modules/fin%23risk%23scorer?wait=true",
                    OPERATOR, "{\"servers\":4,\"monthlyDemand\":200000}");
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            assertThat(a.json().path("status").asText()).isEqualTo(BatchStatus.DEALED.name());
            assertThat(api.submitted.get(0).operations())
                    .containsExactly(new Operation.SetServers<>(ModuleKey.parse("fin#risk#scorer"), 4, 200000));
        }

        @Test
        void monthlyDemandIsOptional() {
            assertThat(put("/api/v1/modules/fin%23risk%23scorer", OPERATOR, "{\"servers\":2}")
                            .status())
                    .isEqualTo(202);
            assertThat(api.submitted.get(0).operations())
                    .containsExactly(new Operation.SetServers<>(ModuleKey.parse("fin#risk#scorer"), 2, 0));
        }

        @Test
        void invalidModuleSettingsAre400() {
            String path = "/api/v1/modules/fin%23risk%23scorer";
            assertBadRequest(put(path, OPERATOR, "{}"), "servers");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":\"4\"}"), "servers");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":0}"), "servers");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":10001}"), "servers");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":4,\"monthlyDemand\":-1}"), "monthlyDemand");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":4,\"weight\":2}"), "weight");
            assertBadRequest(put("/api/v1/modules/fin%23risk", OPERATOR, "{\"servers\":4}"), "module");
            assertBadRequest(put(path, OPERATOR, "[4]"), null);
        }

        @Test
        void listAndGetModules() {
            ModuleKey key = ModuleKey.parse("fin#risk#scorer");
            api.modules.put(
                    key,
                    new OperatorApi.ModuleView(
                            key,
                            4,
                            200000,
                            10,
                            9,
                            5,
                            List.of(new OperatorApi.InstanceView(InstanceId.of("host-a"), "10.0.0.7", 1, true, 5, 0))));
            Answer list = get("/api/v1/modules", VIEWER);
            assertThat(list.status()).isEqualTo(200);
            assertThat(list.json().path("modules").get(0).path("module").asText())
                    .isEqualTo("fin#risk#scorer");
            assertThat(list.json()
                            .path("modules")
                            .get(0)
                            .path("instances")
                            .get(0)
                            .path("instance")
                            .asText())
                    .isEqualTo("host-a");

            Answer one = get("/api/v1/modules/fin%23risk%23scorer", VIEWER);
            assertThat(one.status()).isEqualTo(200);
            assertThat(one.json().path("servers").asInt()).isEqualTo(4);

            Answer unknown = get("/api/v1/modules/fin%23risk%23other", VIEWER);
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.field()).isEqualTo("module");

            Answer invalid = get("/api/v1/modules/nohash", VIEWER);
            assertThat(invalid.status()).isEqualTo(400);
            assertThat(invalid.field()).isEqualTo("module");
        }
    }

    @Nested
    class ApiGaps {
        final ModuleKey fin = ModuleKey.parse("fin#risk#scorer");

        @Test
        void onePidWithAttributesNeverItsSecretAnd404ForAnUnknownId() {
            api.pids.add(new OperatorApi.PidView(
                    new ReadModel.Pid(
                            "u1", fin, PidAvailability.ACTIVE, 10, 2, InstanceId.of("h1"), PidState.ADDED, ""),
                    7));
            api.attributes.put("u1", Map.of("region", "eu", "tier", "gold"));
            Answer a = get("/api/v1/pids/u1", VIEWER);
            assertThat(a.status()).as(a.text()).isEqualTo(200);
            assertThat(a.json().path("id").asText()).isEqualTo("u1");
            assertThat(a.json().path("module").asText()).isEqualTo("fin#risk#scorer");
            assertThat(a.json().path("instance").asText()).isEqualTo("h1");
            assertThat(a.json().path("nodeState").asText()).isEqualTo("ADDED");
            assertThat(a.json().path("used").asLong()).isEqualTo(7);
            assertThat(a.json().path("monthlyQuota").asLong()).isEqualTo(10);
            assertThat(a.json().path("attributes").path("region").asText()).isEqualTo("eu");
            assertThat(a.text()).doesNotContainIgnoringCase("secret");

            Answer unknown = get("/api/v1/pids/u9", VIEWER);
            assertThat(unknown.status()).isEqualTo(404);
            assertThat(unknown.field()).isEqualTo("id");
            assertThat(unknown.json().path("code").asText()).isEqualTo("NOT_FOUND");
            assertThat(get("/api/v1/pids/u1", null).status()).isEqualTo(401);
            Answer malformed = get("/api/v1/pids/" + "x".repeat(300), VIEWER);
            assertThat(malformed.status()).isEqualTo(400);
            assertThat(malformed.field()).isEqualTo("id");
        }

        @Test
        void aWrongMethodOnAKnownPathIs405WithAllowAndTheErrorShape() {
            Answer a = send("DELETE", "/api/v1/pids", OPERATOR, null, null);
            assertThat(a.status()).as(a.text()).isEqualTo(405);
            assertThat(a.json().path("code").asText()).isEqualTo("METHOD_NOT_ALLOWED");
            assertThat(a.json().has("field")).isTrue();
            assertThat(a.error()).contains("DELETE");
            assertThat(a.response().headers().firstValue("Allow")).hasValue("GET");
            Answer put = send("PUT", "/api/v1/batches", OPERATOR, "application/json", BodyPublishers.ofString("{}"));
            assertThat(put.status()).isEqualTo(405);
            assertThat(put.response().headers().firstValue("Allow").orElse("")).contains("GET", "POST");
            assertThat(api.submitted).isEmpty();
            assertThat(get("/api/v1/nothing-here", VIEWER).status()).isEqualTo(404);
        }

        @Test
        void updateWithoutASecretKeepsThePasswordAndIsNotRefused() {
            Answer a = post(
                    "/api/v1/batches",
                    OPERATOR,
                    "{\"operations\":[{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":500,"
                            + "\"attributes\":{\"region\":\"us\"}}]}]}");
            assertThat(a.status()).as(a.text()).isEqualTo(202);
            Operation.Update<String> update =
                    (Operation.Update<String>) api.submitted.get(0).operations().get(0);
            assertThat(update.pids().get(0).secret()).isNull();
            assertThat(update.pids().get(0).monthlyQuota()).isEqualTo(500);
            assertThat(update.pids().get(0).attributes()).containsEntry("region", "us");
        }

        @Test
        void addStillNeedsASecretAndBadUpdatesAre400() {
            assertBadRequest(
                    post(
                            "/api/v1/batches",
                            OPERATOR,
                            "{\"operations\":[{\"type\":\"ADD\",\"module\":\"fin#risk#scorer\","
                                    + "\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":5}]}]}"),
                    "operations[0].pids[0].secret");
            assertBadRequest(
                    post(
                            "/api/v1/batches",
                            OPERATOR,
                            "{\"operations\":[{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":-1}]}]}"),
                    "operations[0].pids[0].monthlyQuota");
            assertBadRequest(
                    post(
                            "/api/v1/batches",
                            OPERATOR,
                            "{\"operations\":[{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":5,"
                                    + "\"secret\":\"\"}]}]}"),
                    "operations[0].pids[0].secret");
            assertBadRequest(
                    post(
                            "/api/v1/batches",
                            OPERATOR,
                            "{\"operations\":[{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":\"5\"}]}]}"),
                    "operations[0].pids[0].monthlyQuota");
        }

        @Test
        void moduleRebalanceDelayIsSetValidatedAndShown() {
            String path = "/api/v1/modules/fin%23risk%23scorer";
            assertBadRequest(put(path, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":-1}"), "rebalanceDelayMs");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":86400001}"), "rebalanceDelayMs");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":\"5s\"}"), "rebalanceDelayMs");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":1.5}"), "rebalanceDelayMs");
            assertBadRequest(put(path, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":"), null);
            Answer ok = put(path + "?wait=true", OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":1500}");
            assertThat(ok.status()).as(ok.text()).isEqualTo(200);
            assertThat(api.submitted.get(0).operations())
                    .containsExactly(new Operation.SetServers<>(fin, 2, 0, Duration.ofMillis(1500)));
            assertThat(ok.json()
                            .path("operations")
                            .get(0)
                            .path("rebalanceDelayMs")
                            .asLong())
                    .isEqualTo(1500);
            api.modules.put(fin, new OperatorApi.ModuleView(fin, 2, 0, 0, 0, 0, List.of(), 0, 0, 1500L));
            assertThat(get(path, VIEWER).json().path("rebalanceDelayMs").asLong())
                    .isEqualTo(1500);
        }
    }

    @Nested
    class Pids {
        @BeforeEach
        void pids() {
            ModuleKey fin = ModuleKey.parse("fin#risk#scorer");
            ModuleKey ops = ModuleKey.parse("ops#chat#bot");
            api.pids.add(new OperatorApi.PidView(new ReadModel.Pid(
                    "u1", fin, PidAvailability.ACTIVE, 10, 0, InstanceId.of("h1"), PidState.ADDED, "")));
            api.pids.add(new OperatorApi.PidView(
                    new ReadModel.Pid("u2", fin, PidAvailability.COOLDOWN, 10, 0, null, null, "")));
            api.pids.add(new OperatorApi.PidView(new ReadModel.Pid(
                    "u3", ops, PidAvailability.ACTIVE, 5, 0, InstanceId.of("h2"), PidState.ADDING, "")));
        }

        @Test
        void filtersAndPages() {
            Answer byModule = get("/api/v1/pids?module=fin%23risk%23scorer", VIEWER);
            assertThat(byModule.status()).isEqualTo(200);
            assertThat(byModule.json().path("pids")).hasSize(2);
            assertThat(byModule.json().path("pids").get(0).path("nodeState").asText())
                    .isEqualTo("ADDED");
            assertThat(byModule.json().path("pids").get(1).path("instance").isNull())
                    .isTrue();

            Answer byState = get("/api/v1/pids?state=adding", VIEWER);
            assertThat(byState.json().path("pids")).hasSize(1);
            assertThat(byState.json().path("pids").get(0).path("id").asText()).isEqualTo("u3");

            Answer page = get("/api/v1/pids?limit=2", VIEWER);
            assertThat(page.json().path("pids")).hasSize(2);
            assertThat(page.json().path("next").asText()).isEqualTo("u2");
            Answer rest = get("/api/v1/pids?limit=2&after=u2", VIEWER);
            assertThat(rest.json().path("pids")).hasSize(1);
            assertThat(rest.json().path("next").isNull()).isTrue();
        }

        @Test
        void badFiltersAre400() {
            assertBadRequest(get("/api/v1/pids?state=GONE", VIEWER), "state");
            assertBadRequest(get("/api/v1/pids?status=GONE", VIEWER), "status");
            assertBadRequest(get("/api/v1/pids?module=fin", VIEWER), "module");
            assertBadRequest(get("/api/v1/pids?limit=0", VIEWER), "limit");
            assertBadRequest(get("/api/v1/pids?limit=10001", VIEWER), "limit");
            assertBadRequest(get("/api/v1/pids?after=a%2Fb", VIEWER), "after");
        }
    }

    @Nested
    class ErrorMapping {
        @ParameterizedTest
        @EnumSource(ErrorCode.class)
        void facadeErrorsMapByCode(ErrorCode code) {
            api.failNext.set(new PidPoolException(code, "module", "failed with " + code));
            Answer a = get("/api/v1/modules", VIEWER);
            assertThat(a.status()).isEqualTo(HttpApi.statusOf(code));
            assertThat(a.json().path("code").asText()).isEqualTo(code.name());
            assertThat(a.field()).isEqualTo("module");
            assertThat(a.error()).isEqualTo("failed with " + code);
            assertThat(a.response().headers().firstValue("Retry-After").isPresent())
                    .isEqualTo(code.retryable());
        }

        @Test
        void statusTable() {
            assertThat(HttpApi.statusOf(ErrorCode.INVALID_ARGUMENT)).isEqualTo(400);
            assertThat(HttpApi.statusOf(ErrorCode.NOT_FOUND)).isEqualTo(404);
            assertThat(HttpApi.statusOf(ErrorCode.CONFLICT)).isEqualTo(409);
            assertThat(HttpApi.statusOf(ErrorCode.ILLEGAL_STATE)).isEqualTo(409);
            assertThat(HttpApi.statusOf(ErrorCode.FORBIDDEN)).isEqualTo(403);
            assertThat(HttpApi.statusOf(ErrorCode.FENCED)).isEqualTo(503);
            assertThat(HttpApi.statusOf(ErrorCode.UNAVAILABLE)).isEqualTo(503);
        }

        @Test
        void unexpectedExceptionsAre500WithoutDetails() {
            api.failNext.set(new IllegalStateException("internal detail: password=xyz"));
            Answer a = get("/api/v1/cluster", VIEWER);
            assertThat(a.status()).isEqualTo(500);
            assertThat(a.error()).isEqualTo("internal error");
            assertThat(a.text()).doesNotContain("xyz");
        }

        @Test
        void unknownRoutesAre404Json() {
            Answer a = get("/api/v1/nothing-here", VIEWER);
            assertThat(a.status()).isEqualTo(404);
            assertThat(a.json().path("code").asText()).isEqualTo("NOT_FOUND");
        }

        @Test
        void epochIsANumberAndBatchIdsAreText() {
            api.cluster = new OperatorApi.ClusterView("default", "server-1", null, Epoch.NONE, List.of());
            Answer a = get("/api/v1/cluster", VIEWER);
            assertThat(a.json().path("leader").isNull()).isTrue();
            assertThat(a.json().path("epoch").isNumber()).isTrue();
            Answer b = post("/api/v1/batches", OPERATOR, addBatch("u1"));
            assertThat(b.json().path("id").isTextual()).isTrue();
        }
    }

    @Test
    void neitherSecretsNorTokensReachTheLogs() {
        // everything at INFO (what production logs), PidPool's own code at DEBUG
        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        Logger own = (Logger) LoggerFactory.getLogger("io.pidpool");
        ch.qos.logback.classic.Level rootBefore = root.getLevel();
        ch.qos.logback.classic.Level ownBefore = own.getLevel();
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        root.addAppender(appender);
        root.setLevel(ch.qos.logback.classic.Level.INFO);
        own.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try {
            post("/api/v1/batches?wait=true", OPERATOR, addBatch("u1"));
            post("/api/v1/batches", OPERATOR, "{\"operations\":[{\"type\":\"ADD\",\"secret\":" + SECRET + "}");
            post("/api/v1/batches", OPERATOR, addBatch("u1").replace("10000", "-1"));
            api.failNext.set(new IllegalStateException("boom"));
            post("/api/v1/batches", OPERATOR, addBatch("u2"));
        } finally {
            root.detachAppender(appender);
            root.setLevel(rootBefore);
            own.setLevel(ownBefore);
        }
        assertThat(appender.list).isNotEmpty();
        assertThat(appender.list).allSatisfy(e -> {
            String all = e.getFormattedMessage()
                    + (e.getThrowableProxy() == null
                            ? ""
                            : e.getThrowableProxy().getMessage());
            assertThat(all).doesNotContain(SECRET).doesNotContain(OPERATOR);
        });
        assertThat(appender.list)
                .anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("POST /api/v1/batches -> 200"));
    }
}
