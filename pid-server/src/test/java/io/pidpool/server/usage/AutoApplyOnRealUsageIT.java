package io.pidpool.server.usage;

import static io.pidpool.server.ItSupport.JSON;
import static io.pidpool.server.usage.ServerWorld.ADMIN;
import static io.pidpool.server.usage.ServerWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.server.ItSupport;
import io.pidpool.server.runtime.PidServer;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code advice.autoApply} end to end on the leader's real usage scan ({@link UsageMonitor} reading
 * Redis, no {@code onEstimatedUsage}): a real {@link PidServer}, two modules, a {@link PidClient}
 * spending its only PID's quota with {@code tryAcquire}, the other module with slack. Module usage is
 * exact (no PID moved this month), so the applier acts: the recommendation is explained at {@code GET
 * /api/v1/recommendations}, an audited MIGRATE batch is applied ({@code advice.applied}) and the next
 * report projects no higher cost; the moved-into module's usage is estimated from then on.
 */
class AutoApplyOnRealUsageIT {
    static final String SHORT = "fin#risk#scorer";
    static final String SLACK = "ops#monitor#collector";

    @TempDir
    Path dir;

    ServerWorld world;

    @BeforeEach
    void setUp() {
        world = new ServerWorld(dir);
    }

    @AfterEach
    void tearDown() throws Exception {
        world.close();
    }

    @Test
    void aShortModuleGetsAPidFromTheSlackOneAutomaticallyOnRealCounters() throws Exception {
        PidServer server = world.startServer(
                """
                monitoring: { scanIntervalMs: 300 }
                advice:
                  evaluateIntervalMs: 3000
                  tariff: [ { unitPrice: 0.01 } ]
                  autoApply: { enabled: true, maxMovesPerInterval: 5, intervalMs: 1000 }
                """);
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
                  {"type":"ADD","module":"%s","pids":[{"id":"s1","secret":"pw-s1","monthlyQuota":100}]},
                  {"type":"ADD","module":"%s","pids":[{"id":"o1","secret":"pw-o1","monthlyQuota":1000},
                     {"id":"o2","secret":"pw-o2","monthlyQuota":1000},{"id":"o3","secret":"pw-o3","monthlyQuota":1000}]}
                ]}"""
                        .formatted(SHORT, SLACK));
        assertThat(added.statusCode()).as(added.body()).isEqualTo(200);

        // the SHORT module's instance spends s1's whole quota through the SDK
        PidClient client = world.startClient(SHORT, "short", ServerWorld.quietListener());
        List<Permit> permits = new ArrayList<>();
        await().atMost(WAIT).until(() -> client.tryAcquire(10).map(permits::add).isPresent());
        for (Optional<Permit> p = client.tryAcquire(10); p.isPresent(); p = client.tryAcquire(10)) {
            permits.add(p.get());
        }
        assertThat(permits).allSatisfy(p -> assertThat(p.pid()).isEqualTo("s1"));
        assertThat(permits.stream().mapToLong(Permit::commands).sum()).isEqualTo(100);
        Instant spent = Instant.now(); // every deduction is in Redis (tryAcquire returned after it)

        // the recommendation, explained, while it is open (the applier acts at its next evaluation)
        AtomicReference<JsonNode> seen = new AtomicReference<>();
        await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
            HttpResponse<String> recs = ItSupport.get(base + "/api/v1/recommendations", ADMIN);
            JsonNode first = recs.statusCode() == 200
                    ? JSON.readTree(recs.body()).path("recommendations").path(0)
                    : null;
            if (first != null && !first.isMissingNode()) {
                seen.set(first);
                return true;
            }
            return false;
        });
        JsonNode rec = seen.get();
        assertThat(rec.path("source").path("module").asText()).isEqualTo(SLACK);
        assertThat(rec.path("target").path("module").asText()).isEqualTo(SHORT);
        assertThat(rec.path("explanation").asText())
                .contains(SHORT + " is short", SLACK + " has slack", "Projected overage cost");
        assertThat(new BigDecimal(rec.path("costDelta").asText())).isNegative();

        // the real scan counts SHORT exactly: no PID moved this month. A report counts what Redis held
        // when it was taken ("at", read after that instant) and is served while fresh (one scan
        // interval): one taken while the permits were still being deducted counts only those before it
        AtomicReference<JsonNode> counted = new AtomicReference<>();
        await().atMost(WAIT).until(() -> {
            JsonNode report = usage(base);
            counted.set(report);
            return Instant.parse(report.path("at").asText()).isAfter(spent);
        });
        JsonNode shortBefore = module(counted.get(), SHORT);
        assertThat(shortBefore.path("usageEstimated").asBoolean()).isFalse();
        assertThat(shortBefore.path("used").asLong()).isEqualTo(100);

        // applied without an operator and without onEstimatedUsage: an audited MIGRATE batch
        AtomicReference<JsonNode> audit = new AtomicReference<>();
        await().atMost(WAIT).until(() -> {
            JsonNode entries = JSON.readTree(ItSupport.get(base + "/api/v1/audit?limit=100", ADMIN)
                            .body())
                    .path("entries");
            for (JsonNode e : entries) {
                if (e.path("action").asText().equals("advice.applied")) {
                    audit.set(e);
                    return true;
                }
            }
            return false;
        });
        String detail = audit.get().path("detail").asText();
        assertThat(detail).contains("auto-applied", SHORT + " is short", SLACK + " has slack");
        String batchId = audit.get().path("target").asText();
        AtomicReference<JsonNode> batch = new AtomicReference<>();
        await().atMost(WAIT).until(() -> {
            JsonNode b = JSON.readTree(
                    ItSupport.get(base + "/api/v1/batches/" + batchId, ADMIN).body());
            batch.set(b);
            return b.path("status").asText().equals("DEALED");
        });
        assertThat(batch.get().path("requestedBy").asText()).isNotBlank();
        assertThat(batch.get().path("operations").findValuesAsText("type")).containsOnly("MIGRATE");
        Instant dealed = Instant.parse(batch.get().path("updatedAt").asText());

        // the next report: the moved PID serves SHORT, and the projected cost is not higher
        BigDecimal before = costBefore(detail);
        AtomicReference<JsonNode> after = new AtomicReference<>();
        await().atMost(WAIT).until(() -> {
            JsonNode report = usage(base);
            after.set(report);
            return Instant.parse(report.path("at").asText()).isAfter(dealed)
                    && module(report, SHORT).path("pids").asInt() >= 2;
        });
        BigDecimal costAfter =
                new BigDecimal(after.get().path("projectedOverageCost").asText());
        assertThat(costAfter).isLessThanOrEqualTo(before);
        assertThat(before).isPositive(); // s1 was projected to run over
        // from now on SHORT's PIDs carry another module's usage: estimated, no further automatic moves
        assertThat(module(after.get(), SHORT).path("usageEstimated").asBoolean())
                .isTrue();
    }

    private static JsonNode usage(String base) throws Exception {
        HttpResponse<String> r = ItSupport.get(base + "/api/v1/usage", ADMIN);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static JsonNode module(JsonNode report, String key) {
        for (JsonNode m : report.path("modules")) {
            if (m.path("module").asText().equals(key)) {
                return m;
            }
        }
        throw new AssertionError("no module " + key + " in " + report);
    }

    /** "projected overage cost X before all recommendations" in the audit detail. */
    private static BigDecimal costBefore(String detail) {
        Matcher m = Pattern.compile("projected overage cost (\\S+) before all recommendations")
                .matcher(detail);
        assertThat(m.find()).as(detail).isTrue();
        return new BigDecimal(m.group(1));
    }
}
