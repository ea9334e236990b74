package io.pidpool.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.pidpool.core.error.PidPoolException;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MonitoringConfigTest {
    @Test
    void defaultsApplyWhenTheFileSaysNothing() {
        ServerConfig c = ConfigLoaderTest.load(ConfigLoaderTest.DESIGN_EXAMPLE, Map.of());
        assertThat(c.monitoring()).isEqualTo(MonitoringConfig.defaults());
        assertThat(c.monitoring().overageTariff().costOf(1_000_000)).isEqualByComparingTo(BigDecimal.ZERO);
    }

    @Test
    void tariffTextBecomesTiers() {
        var tariff = MonitoringConfig.parseTariff("1000:0.01, 9000:0.008 ,0.005");
        // 1000 × 0.01 + 9000 × 0.008 + 500 × 0.005
        assertThat(tariff.costOf(10_500)).isEqualByComparingTo("84.5");
        assertThat(MonitoringConfig.parseTariff("0.5").costOf(4)).isEqualByComparingTo("2");
    }

    @Test
    void badValuesAreReportedWithTheirKeys() {
        String yaml = ConfigLoaderTest.DESIGN_EXAMPLE
                + "monitoring: { syncIntervalMs: 0, scanIntervalMs: 99999999, tariff: \"1000:0.01\" }\n";
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigLoaderTest.load(yaml, Map.of()));
        assertThat(e.problems())
                .extracting(ConfigException.Problem::key)
                .containsExactlyInAnyOrder(
                        "monitoring.syncIntervalMs", "monitoring.scanIntervalMs", "monitoring.tariff");
        for (String bad : new String[] {"0.01,1000:0.02", "x:0.01,0.02", "10:-1,0.02", "abc"}) {
            PidPoolException p = catchThrowableOfType(PidPoolException.class, () -> MonitoringConfig.parseTariff(bad));
            assertThat(p).as(bad).isNotNull();
            assertThat(p.field()).as(bad).isEqualTo("monitoring.tariff");
        }
    }

    @Test
    void environmentSetsMetricsAuth() {
        ServerConfig c = ConfigLoaderTest.load(
                ConfigLoaderTest.DESIGN_EXAMPLE, Map.of("PIDPOOL_MONITORING_METRICS_AUTH", "true"));
        assertThat(c.monitoring().metricsAuth()).isTrue();
    }
}
