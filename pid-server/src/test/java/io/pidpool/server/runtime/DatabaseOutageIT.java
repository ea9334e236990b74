package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.server.ItSupport;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.testing.LoopbackZooKeeper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL outage as the operator API sees it: the server reaches PostgreSQL through a {@link
 * BlackHoleProxy} that stalls every byte (the database neither answers nor closes anything). Required
 * (docs/design.md §10, docs/outages.md): {@code /health} reports the database DOWN within 3 s; while
 * it is known to be down a batch answers 503 within 2 s; once the proxy forwards again batches are
 * accepted. Runs when {@code PIDPOOL_TEST_POSTGRES_URL} is set.
 */
class DatabaseOutageIT {
    static final String POSTGRES_ENV = "PIDPOOL_TEST_POSTGRES_URL";
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    static final String OPERATOR = "outage-it-operator-token-0123";

    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private LoopbackZooKeeper zk;
    private BlackHoleProxy proxy;
    private PidServer server;

    @AfterEach
    void stop() throws Exception {
        if (proxy != null) {
            proxy.restore();
        }
        if (server != null) {
            server.close();
        }
        if (proxy != null) {
            proxy.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @Test
    void aStalledDatabaseIsReportedWithin3sAndBatchesAnswer503Within2s() throws Exception {
        String admin = System.getenv(POSTGRES_ENV);
        assumeThat(admin).as(POSTGRES_ENV).isNotBlank();
        ItSupport.tmpdir();
        String schema =
                "pp_t_outage_" + Integer.toHexString(ThreadLocalRandom.current().nextInt() >>> 1);
        try (Connection c = DriverManager.getConnection(admin);
                Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        }
        URI pg = URI.create(admin.substring("jdbc:".length()));
        proxy = BlackHoleProxy.to(pg.getPort() < 0 ? 5432 : pg.getPort());
        String url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + pg.getPath() + "?"
                + (pg.getQuery() == null ? "" : pg.getQuery() + "&") + "currentSchema=" + schema;
        zk = new LoopbackZooKeeper();
        server = new PidServer(config(url), "outage-a").start();
        String base = "http://127.0.0.1:" + server.httpPort();
        ItSupport.awaitLeader(base, OPERATOR);
        HttpResponse<String> module = http.send(
                HttpRequest.newBuilder(URI.create(base + "/api/v1/modules/fin%23risk%23scorer?wait=true"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + OPERATOR)
                        .header("Content-Type", "application/json")
                        .PUT(HttpRequest.BodyPublishers.ofString("{\"servers\": 2}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(module.statusCode()).as(module.body()).isEqualTo(200);
        HttpResponse<String> first = post(base, "o0");
        assertThat(first.statusCode()).as(first.body()).isIn(200, 202);
        Thread.sleep(1500); // every pooled connection idle: the next borrow validates it

        long cut = System.nanoTime();
        proxy.blackHole();
        long downAfter = -1;
        while (System.nanoTime() - cut < Duration.ofSeconds(20).toNanos()) {
            HttpResponse<String> health = get(base + "/health");
            if (ItSupport.JSON
                    .readTree(health.body())
                    .at("/components/database/status")
                    .asText()
                    .equals("DOWN")) {
                downAfter = millisSince(cut);
                break;
            }
            Thread.sleep(50);
        }
        long[] batchMillis = new long[3];
        int[] batchStatus = new int[3];
        for (int i = 0; i < 3; i++) {
            long sent = System.nanoTime();
            batchStatus[i] = post(base, "o" + (i + 1)).statusCode();
            batchMillis[i] = millisSince(sent);
        }
        long heal = System.nanoTime();
        proxy.restore();
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> post(base, "o9").statusCode() < 300);
        long acceptedAfter = millisSince(heal);
        System.out.printf(
                "database outage: /health DOWN %d ms after the cut; batches while known down answered %s in %s ms;"
                        + " a batch accepted again %d ms after the heal%n",
                downAfter,
                java.util.Arrays.toString(batchStatus),
                java.util.Arrays.toString(batchMillis),
                acceptedAfter);

        assertThat(downAfter).as("/health reports the database DOWN within 3 s").isBetween(0L, 3000L);
        for (int i = 0; i < 3; i++) {
            assertThat(batchStatus[i])
                    .as("batch %d while the database is down", i)
                    .isEqualTo(503);
            assertThat(batchMillis[i]).as("batch %d answered within 2 s", i).isLessThanOrEqualTo(2000);
        }
        assertThat(get(base + "/health").statusCode()).isEqualTo(200);
    }

    private static long millisSince(long nanos) {
        return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String base, String pid) throws Exception {
        String body =
                """
                {"operations": [{"type": "ADD", "module": "fin#risk#scorer", "pids": [
                  {"id": "%s", "secret": "pw-%s", "monthlyQuota": 10}]}]}"""
                        .formatted(pid, pid);
        return http.send(
                HttpRequest.newBuilder(URI.create(base + "/api/v1/batches"))
                        .timeout(Duration.ofSeconds(30))
                        .header("Authorization", "Bearer " + OPERATOR)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private ServerConfig config(String url) {
        String yaml =
                """
                cluster: %s
                http: { host: 127.0.0.1, port: 0 }
                zookeeper: { connect: "%s", sessionTimeoutMs: 4000, connectionTimeoutMs: 10000 }
                redis: { address: "%s" }
                database: { url: "%s" }
                security:
                  secretKey: "%s"
                  tokens:
                    - { name: ops, token: "%s", role: operator }
                worker: { enabled: false }
                """
                        .formatted(
                                "outage-" + UUID.randomUUID().toString().substring(0, 8),
                                zk.connectString(),
                                RedisSupport.sharedUrl(),
                                url,
                                KEY,
                                OPERATOR);
        return new ConfigLoader(Map.of()).load(yaml, "server.yml");
    }
}
