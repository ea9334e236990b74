package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.ModuleUsage;
import io.pidpool.core.advice.PidUsage;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.Recommender;
import io.pidpool.core.advice.RecommenderPolicy;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageSnapshot;
import io.pidpool.core.fake.InMemoryAlertStore;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.server.advice.AdviceApi;
import io.pidpool.server.config.Role;
import io.pidpool.server.config.TokenConfig;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** {@code GET /api/v1/alerts} and {@code /api/v1/recommendations} over loopback HTTP. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdviceRoutesTest {
    static final String VIEWER = "viewer-token-0123456789";
    static final Instant AT = Instant.parse("2026-11-16T00:00:00Z");
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey OPS = ModuleKey.parse("ops#monitor#collector");

    final InMemoryAlertStore store = new InMemoryAlertStore();
    final AtomicReference<Optional<Recommendations>> recommendations = new AtomicReference<>(Optional.empty());
    final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    HttpApi http;
    String base;

    final io.pidpool.core.fake.InMemoryDatabase db = io.pidpool.core.fake.InMemoryDatabase.create();
    final java.util.concurrent.atomic.AtomicLong auditIds = new java.util.concurrent.atomic.AtomicLong(100);
    final io.pidpool.server.advice.AlertAcks acks = new io.pidpool.server.advice.AlertAcks(
            store,
            db.repositories(),
            auditIds::incrementAndGet,
            java.time.Clock.fixed(AT.plusSeconds(60), ZoneOffset.UTC));

    @BeforeAll
    void start() {
        AdviceApi advice = new AdviceApi() {
            @Override
            public StoredAlert acknowledge(long id, String actor) {
                return acks.acknowledge(id, actor);
            }

            @Override
            public List<StoredAlert> openAlerts() {
                return store.open();
            }

            @Override
            public List<StoredAlert> recentAlerts(int limit) {
                return store.recent(limit);
            }

            @Override
            public Optional<Recommendations> recommendations() {
                return recommendations.get();
            }
        };
        http = new HttpApi(
                        new HttpApi.Settings("127.0.0.1", 0, 64 * 1024),
                        new InMemoryOperatorApi(),
                        () -> null,
                        BearerTokens.of(List.of(new TokenConfig("alice", VIEWER, Role.VIEWER))))
                .advice(advice)
                .start();
        base = "http://127.0.0.1:" + http.port();
        store.raise(1, alert("PID_UTILISATION:u1:80", AlertKind.PID_UTILISATION, "u1"), AT);
        store.raise(
                2, alert("BRAKE_ENGAGED:fin#risk#scorer", AlertKind.BRAKE_ENGAGED, FIN.toString()), AT.plusSeconds(1));
        store.resolve("PID_UTILISATION:u1:80", AT.plusSeconds(2));
        store.raise(3, alert("PID_UTILISATION:u2:100", AlertKind.PID_UTILISATION, "u2"), AT.plusSeconds(3));
    }

    @AfterAll
    void stop() {
        http.close();
    }

    static Alert alert(String key, AlertKind kind, String subject) {
        return new Alert(key, kind, Severity.WARNING, subject, "about " + subject, AT);
    }

    record Answer(int status, JsonNode body) {}

    Answer get(String path, String token) throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        return new Answer(response.statusCode(), ApiJson.MAPPER.readTree(response.body()));
    }

    @Test
    void openAlertsByDefaultAndEveryStateOnRequest() throws Exception {
        Answer open = get("/api/v1/alerts", VIEWER);
        assertThat(open.status()).isEqualTo(200);
        assertThat(open.body().get("state").asText()).isEqualTo("open");
        assertThat(open.body().get("alerts").findValuesAsText("key"))
                .containsExactly("BRAKE_ENGAGED:fin#risk#scorer", "PID_UTILISATION:u2:100");
        JsonNode first = open.body().get("alerts").get(0);
        assertThat(first.get("state").asText()).isEqualTo("OPEN");
        assertThat(first.get("kind").asText()).isEqualTo("BRAKE_ENGAGED");
        assertThat(first.get("occurrences").asLong()).isEqualTo(1);
        assertThat(first.get("resolvedAt").isNull()).isTrue();

        Answer all = get("/api/v1/alerts?state=all&limit=2", VIEWER);
        assertThat(all.status()).isEqualTo(200);
        assertThat(all.body().get("alerts").findValuesAsText("key"))
                .containsExactly("PID_UTILISATION:u2:100", "BRAKE_ENGAGED:fin#risk#scorer");
        Answer every = get("/api/v1/alerts?state=all", VIEWER);
        assertThat(every.body().get("alerts").get(2).get("state").asText()).isEqualTo("RESOLVED");
        assertThat(every.body().get("alerts").get(2).get("resolvedAt").asText()).isEqualTo("2026-11-16T00:00:02Z");
    }

    @Test
    void badParametersAre400NamingTheFieldAndNoTokenIs401() throws Exception {
        Answer state = get("/api/v1/alerts?state=closed", VIEWER);
        assertThat(state.status()).isEqualTo(400);
        assertThat(state.body().get("field").asText()).isEqualTo("state");
        Answer limit = get("/api/v1/alerts?state=all&limit=0", VIEWER);
        assertThat(limit.status()).isEqualTo(400);
        assertThat(limit.body().get("field").asText()).isEqualTo("limit");
        Answer text = get("/api/v1/alerts?limit=ten", VIEWER);
        assertThat(text.status()).isEqualTo(400);
        assertThat(text.body().get("field").asText()).isEqualTo("limit");
        assertThat(get("/api/v1/alerts", null).status()).isEqualTo(401);
        assertThat(get("/api/v1/recommendations", null).status()).isEqualTo(401);
    }

    @Test
    void recommendationsExplainEachMoveWithItsCostDeltaAnd503WithoutAReport() throws Exception {
        recommendations.set(Optional.empty());
        assertThat(get("/api/v1/recommendations", VIEWER).status()).isEqualTo(503);

        var snapshot = new UsageSnapshot(
                AT,
                new MonthlyWindow(ZoneOffset.UTC),
                OverageTariff.of(OverageTariff.Tier.unbounded("0.01")),
                List.of(
                        ModuleUsage.of(ModuleConfig.of(FIN, 1), 1, 1_000),
                        ModuleUsage.of(ModuleConfig.of(OPS, 1), 1, 0)),
                List.of(
                        new PidUsage("f1", FIN, 1_000, 5_000, 1_000, PidAvailability.ACTIVE),
                        new PidUsage("o1", OPS, 1_000, 0, 0, PidAvailability.ACTIVE),
                        new PidUsage("o2", OPS, 1_000, 0, 0, PidAvailability.ACTIVE),
                        new PidUsage("o3", OPS, 1_000, 0, 0, PidAvailability.ACTIVE)));
        Recommendations r = new Recommender(RecommenderPolicy.defaults())
                .recommend(UsageProjector.blended().project(snapshot));
        assertThat(r.isEmpty()).isFalse();
        recommendations.set(Optional.of(r));

        Answer answer = get("/api/v1/recommendations", VIEWER);
        assertThat(answer.status()).isEqualTo(200);
        JsonNode body = answer.body();
        assertThat(new BigDecimal(body.get("costAfter").asText()))
                .isLessThan(new BigDecimal(body.get("costBefore").asText()));
        JsonNode move = body.get("recommendations").get(0);
        assertThat(move.get("source").get("module").asText()).isEqualTo(OPS.toString());
        assertThat(move.get("target").get("module").asText()).isEqualTo(FIN.toString());
        assertThat(new BigDecimal(move.get("costDelta").asText())).isNegative();
        assertThat(move.get("explanation").asText())
                .contains(OPS + " has slack")
                .contains(FIN + " is short");
        assertThat(body.get("moves").asInt()).isEqualTo(r.moves());
    }
}
