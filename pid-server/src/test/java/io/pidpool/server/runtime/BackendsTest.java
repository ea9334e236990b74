package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.server.config.RedisConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BackendsTest {
    @Test
    void urlsInMessagesLoseTheirCredentials() {
        assertThat(Backends.redactUrl("jdbc:postgresql://db:5432/pidpool?user=postgres&password=secret"))
                .isEqualTo("jdbc:postgresql://db:5432/pidpool");
        assertThat(Backends.redactUrl("jdbc:mariadb://root:secret@db:3306/pidpool"))
                .isEqualTo("jdbc:mariadb://db:3306/pidpool");
        assertThat(Backends.redactUrl("jdbc:h2:file:/data/db/pidpool;PASSWORD=secret"))
                .isEqualTo("jdbc:h2:file:/data/db/pidpool");
        assertThat(Backends.redisLabel(new RedisConfig("redis://:secret@cache:6379", "", 0, null)))
                .isEqualTo("redis://cache:6379");
        assertThat(Backends.redisLabel(new RedisConfig(null, "", 0, Map.of("clusterServersConfig", Map.of()))))
                .doesNotContain("secret");
    }
}
