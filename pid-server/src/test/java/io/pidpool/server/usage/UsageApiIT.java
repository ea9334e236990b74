package io.pidpool.server.usage;

import static io.pidpool.server.ItSupport.JSON;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidSpec;
import io.pidpool.server.ItSupport;
import io.pidpool.server.runtime.PidServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /metrics} and {@code GET /api/v1/usage} of a real {@link PidServer} whose leader scans
 * usage that a real {@link PidClient} spends: the figures are what the client did, projected with
 * the configured tariff; bad input is 4xx with a field; {@code http.metricsRequireToken} closes
 * {@code /metrics}.
 */
class UsageApiIT {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey IDLE = ModuleKey.parse("ops#chat#bot");
    static final String MONITORING =
            "monitoring: { scanIntervalMs: 300 }\nadvice: { tariff: [{size: 10, unitPrice: 0.5}, {unitPrice: 1}] }";

    @TempDir
    Path dir;

    @Test
    void metricsAndUsageShowWhatTheClientSpent() throws Exception {
        try (ServerWorld world = new ServerWorld(dir)) {
            PidServer server = world.startServer(MONITORING);
            ServerWorld.awaitLeader(server);
            ServerWorld.apply(
                    server,
                    new Operation.SetServers<>(M, 1, 0),
                    new Operation.SetServers<>(IDLE, 1, 0),
                    new Operation.Add<>(
                            M,
                            List.of(
                                    new PidSpec<>("p1", "pw1", 30, 20, Map.of()),
                                    new PidSpec<>("p2", "pw2", 30, 0, Map.of()))),
                    new Operation.Add<>(IDLE, List.of(new PidSpec<>("q1", "pw3", 100, 0, Map.of()))));
            PidClient client = world.startClient(M.toString(), "box", ServerWorld.quietListener());
            await().atMost(ServerWorld.WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2")));
            Map<String, Long> used = new HashMap<>();
            await().atMost(ServerWorld.WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                Optional<Permit> p = client.tryAcquire(1);
                p.ifPresent(permit -> used.merge(permit.pid(), 1L, Long::sum));
                return p.isPresent();
            });
            // 45 more commands: more than the 60 of quota would allow only with p1's allowance
            for (int i = 0; i < 15; i++) {
                Permit p = client.tryAcquire(3).orElseThrow();
                used.merge(p.pid(), 3L, Long::sum);
            }
            long total = used.values().stream().mapToLong(Long::longValue).sum();
            assertThat(total).isEqualTo(46);

            String base = "http://127.0.0.1:" + server.httpPort();
            String url = base + "/api/v1/usage?module=fin%23risk%23scorer";
            await().atMost(ServerWorld.WAIT)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() ->
                            JSON.readTree(ItSupport.get(url, ServerWorld.VIEWER).body())
                                            .path("totalUsed")
                                            .asLong()
                                    == total);
            JsonNode usage =
                    JSON.readTree(ItSupport.get(url, ServerWorld.VIEWER).body());
            assertThat(usage.path("modules")).hasSize(1);
            JsonNode module = usage.path("modules").get(0);
            assertThat(module.path("module").asText()).isEqualTo(M.toString());
            assertThat(module.path("used").asLong()).isEqualTo(total);
            assertThat(module.path("quota").asLong()).isEqualTo(60);
            assertThat(module.path("remaining").asLong())
                    .isEqualTo(Math.max(0, 30 - used.getOrDefault("p1", 0L))
                            + Math.max(0, 30 - used.getOrDefault("p2", 0L)));
            assertThat(module.path("projectedUsed").asLong()).isGreaterThanOrEqualTo(total);
            assertThat(usage.path("pids")).hasSize(2);
            for (JsonNode pid : usage.path("pids")) {
                String id = pid.path("id").asText();
                long u = used.getOrDefault(id, 0L);
                assertThat(pid.path("used").asLong()).as(id).isEqualTo(u);
                assertThat(pid.path("remaining").asLong()).as(id).isEqualTo(Math.max(0, 30 - u));
                assertThat(pid.path("utilisation").asDouble()).as(id).isEqualTo(u / 30.0);
                long overage = pid.path("projectedOverage").asLong();
                assertThat(overage)
                        .isEqualTo(Math.max(0, pid.path("projectedUsed").asLong() - 30));
                // tariff 10 × 0.5, then 1 each
                double cost = Math.min(overage, 10) * 0.5 + Math.max(0, overage - 10);
                assertThat(pid.path("projectedOverageCost").decimalValue().doubleValue())
                        .as(id)
                        .isEqualTo(cost);
            }
            // the whole cluster, paged
            JsonNode all = JSON.readTree(ItSupport.get(base + "/api/v1/usage?limit=2", ServerWorld.VIEWER)
                    .body());
            assertThat(all.path("modules")).hasSize(2);
            assertThat(all.path("totalUsed").asLong()).isEqualTo(total);
            assertThat(all.path("pids")).hasSize(2);
            assertThat(all.path("next").asText()).isEqualTo("p2");
            JsonNode rest = JSON.readTree(ItSupport.get(base + "/api/v1/usage?limit=2&after=p2", ServerWorld.VIEWER)
                    .body());
            assertThat(rest.path("pids")).hasSize(1);
            assertThat(rest.path("pids").get(0).path("id").asText()).isEqualTo("q1");
            assertThat(rest.path("next").isNull()).isTrue();

            // bad input: 4xx with the field, never a 500
            assertError(
                    ItSupport.get(base + "/api/v1/usage?module=no%23such%23module", ServerWorld.VIEWER), 404, "module");
            assertError(ItSupport.get(base + "/api/v1/usage?module=not-a-module", ServerWorld.VIEWER), 400, "module");
            assertError(ItSupport.get(base + "/api/v1/usage?limit=0", ServerWorld.VIEWER), 400, "limit");
            assertError(ItSupport.get(base + "/api/v1/usage?limit=x", ServerWorld.VIEWER), 400, "limit");
            assertThat(ItSupport.get(base + "/api/v1/usage", null).statusCode()).isEqualTo(401);

            // Prometheus text, open by default
            HttpResponse<String> metrics = ItSupport.get(base + "/metrics", null);
            assertThat(metrics.statusCode()).isEqualTo(200);
            assertThat(metrics.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
            String text = metrics.body();
            for (String pid : List.of("p1", "p2")) {
                assertThat(gauge(text, "pidpool_pid_used", "module=\"" + M + "\",pid=\"" + pid + "\""))
                        .as(pid)
                        .isEqualTo(used.getOrDefault(pid, 0L).doubleValue());
            }
            assertThat(gauge(text, "pidpool_pid_remaining", "module=\"" + IDLE + "\",pid=\"q1\""))
                    .isEqualTo(100.0);
            assertThat(gauge(text, "pidpool_module_used", "module=\"" + M + "\""))
                    .isEqualTo((double) total);
            assertThat(text)
                    .contains("pidpool_pid_utilisation{")
                    .contains("pidpool_pid_projected_used{")
                    .contains("pidpool_pid_projected_overage_cost{")
                    .contains("pidpool_module_projected_overage_cost{")
                    .contains("pidpool_usage_sync_recorded_total");
            assertThat(gauge(text, "pidpool_server_leader", null)).isEqualTo(1.0);
            assertThat(gauge(text, "pidpool_server_epoch", null)).isPositive();
            assertThat(gauge(text, "pidpool_server_held_pids", null)).isEqualTo(2.0);

            // a follower answers the same figures: it scans on demand
            PidServer follower = world.startServer(MONITORING, "follower");
            assertThat(follower.node().isLeader()).isFalse();
            String followerBase = "http://127.0.0.1:" + follower.httpPort();
            JsonNode fromFollower = JSON.readTree(
                    ItSupport.get(followerBase + "/api/v1/usage?module=fin%23risk%23scorer", ServerWorld.VIEWER)
                            .body());
            // (projections move with the clock; the counts do not)
            assertThat(fromFollower.path("pids").findValuesAsText("id")).containsExactly("p1", "p2");
            for (JsonNode pid : fromFollower.path("pids")) {
                long u = used.getOrDefault(pid.path("id").asText(), 0L);
                assertThat(pid.path("used").asLong()).isEqualTo(u);
                assertThat(pid.path("remaining").asLong()).isEqualTo(Math.max(0, 30 - u));
            }
            assertThat(fromFollower.path("totalUsed").asLong()).isEqualTo(total);
            String followerMetrics =
                    ItSupport.get(followerBase + "/metrics", null).body();
            assertThat(gauge(followerMetrics, "pidpool_server_leader", null)).isEqualTo(0.0);
            assertThat(gauge(followerMetrics, "pidpool_module_used", "module=\"" + M + "\""))
                    .isEqualTo((double) total);
            assertThat(follower.usage().scans()).isPositive();
            follower.close();

            // another server of the same cluster with metricsRequireToken: /metrics needs a token; it answers
            // the same usage (it leads now and scans, or scans on demand)
            server.close();
            PidServer closed = world.startServer(MONITORING, "closed", true);
            String base2 = "http://127.0.0.1:" + closed.httpPort();
            assertThat(ItSupport.get(base2 + "/metrics", null).statusCode()).isEqualTo(401);
            HttpResponse<String> withToken = ItSupport.get(base2 + "/metrics", ServerWorld.VIEWER);
            assertThat(withToken.statusCode()).isEqualTo(200);
            assertThat(gauge(withToken.body(), "pidpool_module_used", "module=\"" + M + "\""))
                    .isEqualTo((double) total);
        }
    }

    static void assertError(HttpResponse<String> response, int status, String field) throws Exception {
        assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
        JsonNode body = JSON.readTree(response.body());
        assertThat(body.path("error").asText()).isNotBlank();
        assertThat(body.path("field").asText()).isEqualTo(field);
    }

    /** The value of one sample; {@code labels} null for a gauge without labels. */
    static double gauge(String text, String name, String labels) {
        String head = labels == null ? name : name + "{" + labels;
        Pattern line = Pattern.compile(
                "^" + Pattern.quote(head) + (labels == null ? "" : "[^}]*\\}") + " (\\S+)$", Pattern.MULTILINE);
        Matcher m = line.matcher(text);
        assertThat(m.find()).as("%s in\n%s", head, text).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
