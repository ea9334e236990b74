package io.pidpool.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class EnvironmentKeysTest {
    @Test
    void environmentNamesFollowTheDocumentedScheme() {
        Map<String, String> names = EnvironmentKeys.all().stream()
                .collect(Collectors.toMap(EnvironmentKeys.Key::path, EnvironmentKeys.Key::envName));
        assertThat(names)
                .containsEntry("zookeeper.connect", "PIDPOOL_ZOOKEEPER_CONNECT")
                .containsEntry("zookeeper.sessionTimeoutMs", "PIDPOOL_ZOOKEEPER_SESSION_TIMEOUT_MS")
                .containsEntry("http.port", "PIDPOOL_HTTP_PORT")
                .containsEntry("database.url", "PIDPOOL_DATABASE_URL")
                .containsEntry("security.secretKey", "PIDPOOL_SECURITY_SECRET_KEY")
                .containsEntry("security.tokens", "PIDPOOL_SECURITY_TOKENS")
                .containsEntry("redis.redisson", "PIDPOOL_REDIS_REDISSON")
                .containsEntry("worker.enabled", "PIDPOOL_WORKER_ENABLED");
        assertThat(EnvironmentKeys.all().stream()
                        .filter(EnvironmentKeys.Key::structured)
                        .map(EnvironmentKeys.Key::path))
                .containsExactlyInAnyOrder(
                        "redis.redisson",
                        "security.secretKeys",
                        "security.tokens",
                        "advice.utilisationPercents",
                        "advice.tariff");
    }
}
