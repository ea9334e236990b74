package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.fake.InMemoryAlertStore;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.server.advice.AdviceApi;
import io.pidpool.server.advice.AlertAcks;
import io.pidpool.server.config.Role;
import io.pidpool.server.config.TokenConfig;
import io.pidpool.server.security.SecretRotationRoutes;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The OpenAPI document ({@code GET /api/v1/openapi.json}) against the server it describes, over
 * loopback HTTP: every route registered is described, every example satisfies its schema (JSON
 * Schema 2020-12, networknt), and the error answers of the running server have the documented
 * shape and a documented status. The full server's routes are checked the same way in {@code
 * OperatorApiIT}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenApiDocumentTest {
    static final String VIEWER = "viewer-token-0123456789";
    static final String OPERATOR = "operator-token-0123456789";
    static final String ADMIN = "admin-token-0123456789abc";
    static final Instant AT = Instant.parse("2026-11-27T08:00:00Z");
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZg==";

    final OpenApiDocument document = OpenApiDocument.load();
    final InMemoryOperatorApi api = new InMemoryOperatorApi();
    final InMemoryAlertStore alerts = new InMemoryAlertStore();
    final InMemoryDatabase db = InMemoryDatabase.create();
    final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpApi http;
    String base;

    @BeforeAll
    void start() {
        AtomicLong ids = new AtomicLong(1_000);
        AlertAcks acks =
                new AlertAcks(alerts, db.repositories(), ids::incrementAndGet, Clock.fixed(AT, ZoneOffset.UTC));
        AdviceApi advice = new AdviceApi() {
            @Override
            public List<StoredAlert> openAlerts() {
                return alerts.open();
            }

            @Override
            public List<StoredAlert> recentAlerts(int limit) {
                return alerts.recent(limit);
            }

            @Override
            public Optional<Recommendations> recommendations() {
                return Optional.empty();
            }

            @Override
            public StoredAlert acknowledge(long id, String actor) {
                return acks.acknowledge(id, actor);
            }
        };
        http = new HttpApi(
                        new HttpApi.Settings("127.0.0.1", 0, 16 * 1024),
                        api,
                        () -> HealthCheck.Report.of(
                                java.util.Map.of("zookeeper", HealthCheck.Component.up("127.0.0.1:2181"))),
                        BearerTokens.of(List.of(
                                new TokenConfig("alice", VIEWER, Role.VIEWER),
                                new TokenConfig("bob", OPERATOR, Role.OPERATOR),
                                new TokenConfig("root", ADMIN, Role.ADMIN))))
                .advice(advice);
        SecretRotationRoutes.register(
                http, io.pidpool.core.secret.SecretSealer.fromSingleKey(KEY), db.repositories(), api);
        http.start();
        base = "http://127.0.0.1:" + http.port();
        alerts.raise(7, new Alert("K:open", AlertKind.PID_UTILISATION, Severity.WARNING, "u1", "m", AT), AT);
        alerts.raise(8, new Alert("K:gone", AlertKind.PID_UTILISATION, Severity.WARNING, "u2", "m", AT), AT);
        alerts.resolve("K:gone", AT.plusSeconds(1));
    }

    @AfterAll
    void stop() {
        http.close();
    }

    // ---------------------------------------------------------------- routes

    /** Registered routes the document does not describe ({@code GET /metrics} etc. are wired elsewhere). */
    static Set<String> undocumented(OpenApiDocument document, List<HttpApi.Route> registered) {
        Set<String> missing = new TreeSet<>(OpenApiDocument.routes(registered));
        missing.removeAll(document.routes());
        return missing;
    }

    @Test
    void everyRegisteredRouteIsDescribed() {
        assertThat(http.routes()).as("routes were recorded").hasSizeGreaterThan(15);
        assertThat(undocumented(document, http.routes()))
                .as("routes the server registers but /api/v1/openapi.json does not describe")
                .isEmpty();
    }

    @Test
    void aRouteMissingFromTheDocumentIsReported() {
        // the guard itself: drop one path from the document and the check names it
        assertThat(undocumented(document.without("/api/v1/pids/{id}"), http.routes()))
                .containsExactly("GET /api/v1/pids/{id}");
    }

    @Test
    void theDocumentIsServedAsItIsStored() throws Exception {
        HttpResponse<String> r = client.send(
                HttpRequest.newBuilder(URI.create(base + OpenApiRoutes.PATH)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode served = ApiJson.MAPPER.readTree(r.body());
        assertThat(served).isEqualTo(document.root());
        assertThat(served.path("openapi").asText()).startsWith("3.1.");
        assertThat(document.violations(document.schema("OpenApi"), served)).isEmpty();
    }

    // ---------------------------------------------------------------- examples

    @Test
    void everyExampleSatisfiesItsSchema() {
        List<OpenApiDocument.Example> examples = document.examples();
        assertThat(examples).hasSizeGreaterThan(25);
        List<String> failures = new ArrayList<>();
        for (OpenApiDocument.Example e : examples) {
            List<String> violations = document.violations(e.schema(), e.value());
            if (!violations.isEmpty()) {
                failures.add(e.where() + ": " + violations);
            }
        }
        assertThat(failures).isEmpty();
    }

    @Test
    void theValidatorRejectsWhatTheSchemasForbid() {
        // so that "every example validates" cannot pass on a validator that accepts anything
        JsonNode error = ApiJson.MAPPER.createObjectNode().put("message", "x");
        assertThat(document.violations(document.schema("Error"), error)).isNotEmpty();
        JsonNode leaky = ApiJson.MAPPER.valueToTree(java.util.Map.of(
                "id",
                "u1",
                "module",
                "a#b#c",
                "status",
                "ACTIVE",
                "monthlyQuota",
                1,
                "overageAllowance",
                0,
                "used",
                0,
                "error",
                "",
                "attributes",
                java.util.Map.of(),
                "secret",
                "pw"));
        assertThat(document.violations(document.schema("PidDetail"), leaky)).isNotEmpty();
        JsonNode numericId = ApiJson.MAPPER.createObjectNode().put("id", 249857744587194368L);
        assertThat(document.violations(document.schema("Alert"), numericId)).isNotEmpty();
        JsonNode negative = ApiJson.MAPPER.createObjectNode().put("servers", 2).put("rebalanceDelayMs", -1);
        assertThat(document.violations(document.schema("ModuleSettings"), negative))
                .isNotEmpty();
    }

    // ---------------------------------------------------------------- error answers

    record Probe(String method, String path, String template, String token, String contentType, String body) {}

    static Probe probe(String method, String path, String template, String token) {
        return new Probe(method, path, template, token, null, null);
    }

    static Probe probe(String method, String path, String template, String token, String body) {
        return new Probe(method, path, template, token, "application/json", body);
    }

    @Test
    void everyErrorAnswerHasTheDocumentedShapeAndStatus() throws Exception {
        String fin = "/api/v1/modules/fin%23risk%23scorer";
        String mod = "/api/v1/modules/{module}";
        List<Probe> probes = List.of(
                probe("GET", "/api/v1/cluster", "/api/v1/cluster", null),
                probe("GET", "/api/v1/cluster", "/api/v1/cluster", "wrong-token"),
                probe("GET", "/api/v1/audit", "/api/v1/audit", VIEWER),
                probe("GET", "/api/v1/audit?limit=0", "/api/v1/audit", ADMIN),
                probe("GET", "/api/v1/pids?state=NOPE", "/api/v1/pids", VIEWER),
                probe("GET", "/api/v1/pids/u9", "/api/v1/pids/{id}", VIEWER),
                probe("GET", "/api/v1/pids/" + "x".repeat(300), "/api/v1/pids/{id}", VIEWER),
                probe("GET", "/api/v1/modules/nohash", mod, VIEWER),
                probe("GET", "/api/v1/modules/a%23b%23c", mod, VIEWER),
                probe("GET", "/api/v1/batches/abc", "/api/v1/batches/{id}", VIEWER),
                probe("GET", "/api/v1/batches/42", "/api/v1/batches/{id}", VIEWER),
                probe("GET", "/api/v1/batches?limit=501", "/api/v1/batches", VIEWER),
                probe("GET", "/api/v1/alerts?state=closed", "/api/v1/alerts", VIEWER),
                probe("GET", "/api/v1/recommendations", "/api/v1/recommendations", VIEWER),
                probe("PUT", fin, mod, VIEWER, "{\"servers\":2}"),
                probe("PUT", fin, mod, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":-5}"),
                probe("PUT", fin, mod, OPERATOR, "{\"servers\":2,\"rebalanceDelayMs\":\"1s\"}"),
                probe("PUT", fin, mod, OPERATOR, "{\"servers\":2,"),
                probe("PUT", fin, mod, OPERATOR, "{\"servers\":2,\"x\":1}"),
                new Probe("PUT", fin, mod, OPERATOR, "text/plain", "{\"servers\":2}"),
                probe("PUT", fin, mod, OPERATOR, "{\"servers\":2,\"pad\":\"" + "x".repeat(20_000) + "\"}"),
                probe("POST", "/api/v1/batches", "/api/v1/batches", OPERATOR, "{\"operations\":[]}"),
                probe(
                        "POST",
                        "/api/v1/batches",
                        "/api/v1/batches",
                        OPERATOR,
                        "{\"operations\":[{\"type\":\"UPDATE\",\"pids\":[{\"id\":\"u1\",\"monthlyQuota\":-1}]}]}"),
                probe("POST", "/api/v1/alerts/7/ack", "/api/v1/alerts/{id}/ack", VIEWER),
                probe("POST", "/api/v1/alerts/abc/ack", "/api/v1/alerts/{id}/ack", OPERATOR),
                probe("POST", "/api/v1/alerts/99/ack", "/api/v1/alerts/{id}/ack", OPERATOR),
                probe("POST", "/api/v1/alerts/8/ack", "/api/v1/alerts/{id}/ack", OPERATOR),
                probe("POST", "/api/v1/admin/secrets/reseal", "/api/v1/admin/secrets/reseal", OPERATOR),
                probe("GET", "/api/v1/admin/secrets", "/api/v1/admin/secrets", VIEWER),
                probe("DELETE", "/api/v1/pids", "/api/v1/pids", OPERATOR),
                probe("PATCH", fin, mod, OPERATOR, "{}"),
                probe("GET", "/api/v1/alerts/7/ack", "/api/v1/alerts/{id}/ack", VIEWER),
                probe("POST", "/api/v1/cluster", "/api/v1/cluster", ADMIN, "{}"));
        List<String> failures = new ArrayList<>();
        Set<Integer> seen = new TreeSet<>();
        for (Probe p : probes) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + p.path()));
            if (p.token() != null) {
                b.header("Authorization", "Bearer " + p.token());
            }
            if (p.contentType() != null) {
                b.header("Content-Type", p.contentType());
            }
            b.method(p.method(), p.body() == null ? BodyPublishers.noBody() : BodyPublishers.ofString(p.body()));
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            String what =
                    p.method() + " " + p.path().substring(0, Math.min(p.path().length(), 60)) + " -> " + r.statusCode()
                            + " " + r.body().substring(0, Math.min(r.body().length(), 160));
            seen.add(r.statusCode());
            if (r.statusCode() < 400) {
                failures.add(what + ": expected an error");
                continue;
            }
            List<String> shape = document.violations(document.schema("Error"), ApiJson.MAPPER.readTree(r.body()));
            if (!shape.isEmpty()) {
                failures.add(what + ": not the Error shape " + shape);
            }
            // a wrong method is answered for a path, whatever the method: its statuses are the path's
            Set<Integer> documented = document.statuses(p.method(), p.template());
            if (documented.isEmpty()) { // a method the path does not take: any of its operations' statuses
                Set<Integer> any = new TreeSet<>();
                document.root().path("paths").path(p.template()).fieldNames().forEachRemaining(m -> {
                    if (!m.equals("parameters")) {
                        any.addAll(document.statuses(m, p.template()));
                    }
                });
                documented = any;
            }
            if (r.statusCode() != 405 && !documented.contains(r.statusCode())) {
                failures.add(what + ": status not documented for " + p.template() + " " + documented);
            }
            if (r.statusCode() == 405 && !documented.contains(405)) {
                failures.add(what + ": 405 not documented for " + p.template());
            }
        }
        assertThat(failures).isEmpty();
        assertThat(seen)
                .as("the probes reach every kind of error")
                .contains(400, 401, 403, 404, 405, 409, 413, 415, 503);
        assertThat(api.submitted).as("no refused request recorded anything").isEmpty();
        assertThat(alerts.find(8).orElseThrow().acknowledged()).isEmpty();
        assertThat(alerts.find(7).orElseThrow().acknowledged())
                .as("the viewer's ack was refused")
                .isEmpty();
    }

    @Test
    void anOperatorAcknowledgesAnOpenAlertOnceAndItIsAudited() throws Exception {
        alerts.raise(9, new Alert("K:ack", AlertKind.PID_UTILISATION, Severity.WARNING, "u3", "m", AT), AT);
        for (int i = 0; i < 2; i++) {
            HttpResponse<String> r = client.send(
                    HttpRequest.newBuilder(URI.create(base + "/api/v1/alerts/9/ack"))
                            .header("Authorization", "Bearer " + (i == 0 ? OPERATOR : ADMIN))
                            .POST(BodyPublishers.noBody())
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode alert = ApiJson.MAPPER.readTree(r.body());
            assertThat(alert.path("id").isTextual()).isTrue();
            assertThat(alert.path("acknowledgedBy").asText())
                    .as("the first acknowledgement stays")
                    .isEqualTo("bob");
            assertThat(document.violations(document.schema("Alert"), alert)).isEmpty();
        }
        assertThat(alerts.find(9).orElseThrow().acknowledged().orElseThrow().by())
                .isEqualTo("bob");
        assertThat(db.repositories().audit().recent(10))
                .filteredOn(e -> e.action().equals("alert.acknowledged"))
                .singleElement()
                .satisfies(e -> {
                    assertThat(e.actor()).isEqualTo("bob");
                    assertThat(e.target()).isEqualTo("9");
                });
        HttpResponse<String> list = client.send(
                HttpRequest.newBuilder(URI.create(base + "/api/v1/alerts"))
                        .header("Authorization", "Bearer " + VIEWER)
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(document.violations(document.schema("Alerts"), ApiJson.MAPPER.readTree(list.body())))
                .isEmpty();
    }
}
