package io.pidpool.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.util.Map;
import org.junit.jupiter.api.Test;

class MonitoringConfigTest {
    @Test
    void defaultsApplyWhenTheFileSaysNothing() {
        ServerConfig c = ConfigLoaderTest.load(ConfigLoaderTest.DESIGN_EXAMPLE, Map.of());
        assertThat(c.monitoring()).isEqualTo(MonitoringConfig.defaults());
    }

    @Test
    void badValuesAreReportedWithTheirKeys() {
        String yaml = ConfigLoaderTest.DESIGN_EXAMPLE + "monitoring: { syncIntervalMs: 0, scanIntervalMs: 99999999 }\n";
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoaderTest.load(yaml, Map.of()));
        assertThat(e.problems())
                .extracting(ConfigException.Problem::key)
                .containsExactlyInAnyOrder("monitoring.syncIntervalMs", "monitoring.scanIntervalMs");
    }

    @Test
    void environmentSetsTheScanInterval() {
        ServerConfig c = ConfigLoaderTest.load(
                ConfigLoaderTest.DESIGN_EXAMPLE, Map.of("PIDPOOL_MONITORING_SCAN_INTERVAL_MS", "2500"));
        assertThat(c.monitoring().scanIntervalMs()).isEqualTo(2500);
    }
}
