package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.server.config.ConfigException;
import io.pidpool.server.config.DatabaseConfig;
import io.pidpool.server.config.EmbeddedWorkerConfig;
import io.pidpool.server.config.HttpConfig;
import io.pidpool.server.config.RedisConfig;
import io.pidpool.server.config.Role;
import io.pidpool.server.config.SecurityConfig;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.config.TokenConfig;
import io.pidpool.server.config.ZooKeeperConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

class PidServerTest {
    @Test
    void anInvalidConfigIsRejectedBeforeAnythingStarts() {
        ServerConfig invalid = new ServerConfig(
                "default",
                new HttpConfig("127.0.0.1", 0, 1 << 20),
                new ZooKeeperConfig("", 5000, 1000),
                new RedisConfig("redis://127.0.0.1:1", "", 0, null),
                new DatabaseConfig("jdbc:h2:mem:x", "", "", 2),
                new SecurityConfig(
                        "MDEyMzQ1Njc4OWFiY2RlZg==", List.of(new TokenConfig("a", "0123456789abcdef", Role.ADMIN))),
                new EmbeddedWorkerConfig(false));
        assertThatThrownBy(() -> new PidServer(invalid))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("zookeeper.connect");
    }
}
