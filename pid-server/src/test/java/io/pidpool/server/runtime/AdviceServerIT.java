package io.pidpool.server.runtime;

import static io.pidpool.server.ItSupport.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.ItSupport;
import io.pidpool.server.advice.WebhookTasks;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.embedded.EmbeddedZooKeeper;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The advice as {@code PidServer} wires it, end to end: a real server (embedded ZooKeeper, real
 * Redis, H2, in-process pid-worker) configured by YAML; PIDs added over HTTP, a PID's quota spent in
 * Redis, then the alert listed at {@code GET /api/v1/alerts}, POSTed to a webhook receiver through a
 * worker task, and a recommendation with its explanation at {@code GET /api/v1/recommendations}.
 */
class AdviceServerIT {
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String ADMIN = "it-admin-token-0123456789";
    static final String SHORT = "fin#risk#scorer";
    static final String SLACK = "ops#monitor#collector";

    @TempDir
    Path dir;

    final List<JsonNode> received = new CopyOnWriteArrayList<>();
    final String cluster = "adv" + UUID.randomUUID().toString().substring(0, 8);
    EmbeddedZooKeeper zk;
    HttpServer receiver;
    PidServer server;

    @BeforeEach
    void start() throws Exception {
        ItSupport.tmpdir();
        zk = EmbeddedZooKeeper.start(dir.resolve("zk"), ItSupport.freePorts(1)[0], 1000);
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hook", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            var node = (com.fasterxml.jackson.databind.node.ObjectNode) JSON.readTree(body);
            received.add(node.put("delivery", exchange.getRequestHeaders().getFirst(WebhookTasks.DELIVERY_HEADER)));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        receiver.start();
        int http = ItSupport.freePorts(1)[0];
        String yaml =
                """
                cluster: %s
                http: { host: 127.0.0.1, port: %d }
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000 }
                redis: { address: "%s" }
                database: { url: "jdbc:h2:mem:%s;DB_CLOSE_DELAY=-1" }
                security: { secretKey: "%s", tokens: [ { name: ops, token: "%s", role: admin } ] }
                advice:
                  evaluateIntervalMs: 300
                  tariff: [ { unitPrice: 0.01 } ]
                  webhook: { url: "http://127.0.0.1:%d/hook" }
                """
                        .formatted(
                                cluster,
                                http,
                                zk.connectString(),
                                RedisSupport.sharedUrl(),
                                UUID.randomUUID().toString().replace("-", ""),
                                KEY,
                                ADMIN,
                                receiver.getAddress().getPort());
        server = new PidServer(new ConfigLoader(Map.of()).load(yaml, "server.yml")).start();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
        receiver.stop(0);
        zk.close();
    }

    @Test
    void anExhaustedPidIsListedSentToTheWebhookAndARecommendationExplainsWhereQuotaIsSpare() throws Exception {
        String base = "http://127.0.0.1:" + server.httpPort();
        ItSupport.awaitLeader(base, ADMIN);
        for (String module : List.of(SHORT, SLACK)) {
            var put = ItSupport.putJson(
                    base + "/api/v1/modules/" + module.replace("#", "%23") + "?wait=true", ADMIN, "{\"servers\":1}");
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);
        }
        HttpResponse<String> added = ItSupport.postJson(
                base + "/api/v1/batches?wait=true",
                ADMIN,
                """
                {"operations":[
                  {"type":"ADD","module":"%s","pids":[{"id":"s1","secret":"pw-s1","monthlyQuota":1000}]},
                  {"type":"ADD","module":"%s","pids":[{"id":"o1","secret":"pw-o1","monthlyQuota":1000},
                     {"id":"o2","secret":"pw-o2","monthlyQuota":1000},{"id":"o3","secret":"pw-o3","monthlyQuota":1000}]}
                ]}"""
                        .formatted(SHORT, SLACK));
        assertThat(added.statusCode()).as(added.body()).isEqualTo(200);

        // a client spends s1's whole quota (the leader provisions its limit first)
        try (RedissonQuotaLedger ledger = RedissonQuotaLedger.builder()
                .redisson(server.redisson())
                .cluster(cluster)
                .clientId("spender")
                .build()) {
            QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).current(java.time.Clock.systemUTC());
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> ledger.tryDeduct("s1", month, 1000, "d-s1").granted());
        }

        await().atMost(Duration.ofSeconds(60))
                .until(() -> keys(ItSupport.get(base + "/api/v1/alerts", ADMIN)).contains("PID_UTILISATION:s1:100"));
        await().atMost(Duration.ofSeconds(60)).until(() -> received.stream()
                .anyMatch(n -> n.path("alert").path("key").asText().equals("PID_UTILISATION:s1:100")
                        && n.path("event").asText().equals("RAISED")));
        JsonNode sent = received.stream()
                .filter(n -> n.path("alert").path("key").asText().equals("PID_UTILISATION:s1:100"))
                .findFirst()
                .orElseThrow();
        assertThat(sent.path("cluster").asText()).isEqualTo(cluster);
        assertThat(sent.path("delivery").asText()).startsWith("alert:").endsWith(":raised");

        HttpResponse<String> recs = ItSupport.get(base + "/api/v1/recommendations", ADMIN);
        assertThat(recs.statusCode()).as(recs.body()).isEqualTo(200);
        JsonNode first = JSON.readTree(recs.body()).path("recommendations").path(0);
        assertThat(first.path("source").path("module").asText()).isEqualTo(SLACK);
        assertThat(first.path("target").path("module").asText()).isEqualTo(SHORT);
        assertThat(first.path("explanation").asText()).contains(SHORT + " is short");
        assertThat(new java.math.BigDecimal(first.path("costDelta").asText())).isNegative();

        // autoApply is off by default: the PIDs stay where the operator put them
        HttpResponse<String> pids = ItSupport.get(base + "/api/v1/pids?module=" + SHORT.replace("#", "%23"), ADMIN);
        assertThat(pids.body()).contains("\"s1\"").doesNotContain("\"o1\"");
    }

    private static List<String> keys(HttpResponse<String> response) throws Exception {
        if (response.statusCode() != 200) {
            return List.of();
        }
        return JSON.readTree(response.body()).path("alerts").findValuesAsText("key");
    }
}
