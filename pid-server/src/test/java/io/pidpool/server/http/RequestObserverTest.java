package io.pidpool.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.server.config.Role;
import io.pidpool.server.config.TokenConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The hook the server's HTTP metrics hang on: every answered request reaches the observer with its
 * route template (never the raw path, which would make one metric series per module or batch) and
 * status.
 */
class RequestObserverTest {
    record Seen(String method, String route, int status, long nanos) {}

    final List<Seen> seen = new CopyOnWriteArrayList<>();
    final HttpClient client = HttpClient.newHttpClient();
    HttpApi http;

    @AfterEach
    void stop() {
        if (http != null) {
            http.close();
        }
    }

    @Test
    void everyRequestIsObservedWithItsRouteTemplateAndStatus() throws Exception {
        String token = "viewer-token-0123456789";
        http = new HttpApi(
                        new HttpApi.Settings("127.0.0.1", 0, 64 * 1024),
                        new InMemoryOperatorApi(),
                        () -> HealthCheck.Report.of(Map.of("zookeeper", HealthCheck.Component.up("zk"))),
                        BearerTokens.of(List.of(new TokenConfig("alice", token, Role.VIEWER))))
                .observe((method, route, status, nanos) -> seen.add(new Seen(method, route, status, nanos)))
                .start();
        String base = "http://127.0.0.1:" + http.port();

        get(base + "/health", null);
        get(base + "/api/v1/modules/fin%23risk%23scorer", token); // unknown module: 404 of the route
        get(base + "/api/v1/modules/fin%23risk%23scorer", null); // no token: 401 of the route
        get(base + "/no/such/path", null);

        await().atMost(Duration.ofSeconds(5)).until(() -> seen.size() == 4);
        assertThat(seen)
                .extracting(Seen::method, Seen::route, Seen::status)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple("GET", "/health", 200),
                        org.assertj.core.groups.Tuple.tuple("GET", "/api/v1/modules/{module}", 404),
                        org.assertj.core.groups.Tuple.tuple("GET", "/api/v1/modules/{module}", 401),
                        org.assertj.core.groups.Tuple.tuple("GET", "unmatched", 404));
        assertThat(seen).allSatisfy(s -> assertThat(s.nanos()).isNotNegative());
    }

    void get(String url, String token) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).GET();
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        client.send(request.build(), HttpResponse.BodyHandlers.discarding());
    }
}
