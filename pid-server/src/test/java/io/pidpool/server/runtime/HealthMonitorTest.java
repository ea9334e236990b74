package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.server.http.HealthCheck.Component;
import io.pidpool.server.http.HealthCheck.Report;
import io.pidpool.server.http.HealthCheck.Status;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

class HealthMonitorTest {
    @Test
    void upOnlyWhenEveryProbeIsUp() {
        AtomicBoolean redisUp = new AtomicBoolean(true);
        Map<String, Supplier<Component>> probes = new LinkedHashMap<>();
        probes.put("zookeeper", () -> Component.up("zk:2181"));
        probes.put("redis", () -> redisUp.get() ? Component.up("r") : Component.down("refused"));
        HealthMonitor monitor = new HealthMonitor(probes);

        assertThat(monitor.refresh().status()).isEqualTo(Status.UP);
        assertThat(monitor.report().components()).containsOnlyKeys("zookeeper", "redis");

        redisUp.set(false);
        Report down = monitor.refresh();
        assertThat(down.status()).isEqualTo(Status.DOWN);
        assertThat(down.components().get("redis")).isEqualTo(Component.down("refused"));
        assertThat(monitor.report()).isEqualTo(down);
    }

    @Test
    void aThrowingProbeCountsAsDown() {
        HealthMonitor monitor = new HealthMonitor(Map.of("database", () -> {
            throw new IllegalStateException("pool closed");
        }));
        Report report = monitor.refresh();
        assertThat(report.status()).isEqualTo(Status.DOWN);
        assertThat(report.components().get("database").detail()).isEqualTo("IllegalStateException: pool closed");
    }

    @Test
    void reportBeforeTheFirstRoundIsEmptyAndUp() {
        assertThat(new HealthMonitor(Map.of()).report().components()).isEmpty();
    }
}
