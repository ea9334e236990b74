package io.pidpool.server.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code advice:} block of server.yml: defaults, file, environment, validation. */
class AdviceConfigTest {
    @Test
    void defaultsMatchTheBuiltInDefaultsAndChangeNothingTheLeaderDidBefore() {
        ServerConfig c = ConfigLoaderTest.load(ConfigLoaderTest.DESIGN_EXAMPLE, Map.of());
        assertThat(c.advice()).isEqualTo(AdviceConfig.defaults());
        assertThat(c.advice().alertPolicy().utilisationPercents()).containsExactly(80, 100);
        assertThat(c.advice().overageTariff().costOf(1_000)).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(c.advice().autoApply().enabled()).isFalse();
        assertThat(c.advice().webhook().url()).isEmpty();
        assertThat(c.advice().cooldownAfterFailures()).isEqualTo(3);
        assertThat(c.advice().massFailureShare()).isEqualTo(0.5);
        assertThat(c.advice().rebalanceDelay()).isEqualTo(java.time.Duration.ofMinutes(1));
    }

    @Test
    void theDefaultRebalanceDelayReachesTheLeaderAndIsBounded() {
        AdviceConfig a = ConfigLoaderTest.load(
                        ConfigLoaderTest.DESIGN_EXAMPLE, Map.of("PIDPOOL_ADVICE_REBALANCE_DELAY_MS", "15000"))
                .advice();
        assertThat(a.rebalanceDelayMs()).isEqualTo(15_000);
        try (var setup = new io.pidpool.server.advice.AdviceSetup(
                a,
                "c",
                new io.pidpool.core.fake.InMemoryAlertStore(),
                null,
                "g",
                () -> 1L,
                java.time.Clock.systemUTC())) {
            var settings = setup.leaderSettings(io.pidpool.server.leader.LeaderSettings.defaults());
            assertThat(settings.rebalanceDelay()).isEqualTo(java.time.Duration.ofSeconds(15));
        }
        for (String bad : java.util.List.of("-1", "86400001")) {
            assertThat(ConfigLoaderTest.fail(
                                    ConfigLoaderTest.DESIGN_EXAMPLE, Map.of("PIDPOOL_ADVICE_REBALANCE_DELAY_MS", bad))
                            .problems())
                    .extracting(ConfigException.Problem::key)
                    .containsExactly("advice.rebalanceDelayMs");
        }
    }

    @Test
    void thresholdsTariffWebhookAndAutoApplyFromTheFileAndTheEnvironment() {
        String yaml = ConfigLoaderTest.DESIGN_EXAMPLE
                + """
                advice:
                  utilisationPercents: [70, 90, 100]
                  projectedCostAbove: 12.50
                  tariff: [ { size: 1000, unitPrice: 0.01 }, { unitPrice: "0.02" } ]
                  autoApply: { enabled: true, maxMovesPerInterval: 5 }
                """;
        Map<String, String> env = Map.of(
                "PIDPOOL_ADVICE_WEBHOOK_URL", "https://hooks.example.com/pidpool",
                "PIDPOOL_ADVICE_UTILISATION_PERCENTS", "[75, 100]",
                "PIDPOOL_ADVICE_MASS_FAILURE_SHARE", "0.3",
                "PIDPOOL_ADVICE_COOLDOWN_AFTER_FAILURES", "5");
        AdviceConfig a = ConfigLoaderTest.load(yaml, env).advice();

        assertThat(a.utilisationPercents()).containsExactly(75, 100);
        assertThat(a.projectedCostAbove()).isEqualByComparingTo("12.5");
        OverageTariff tariff = a.overageTariff();
        assertThat(tariff.costOf(1_500)).isEqualByComparingTo("20"); // 1000 * 0.01 + 500 * 0.02
        assertThat(a.autoApply().enabled()).isTrue();
        assertThat(a.autoApply().maxMovesPerInterval()).isEqualTo(5);
        assertThat(a.autoApply().intervalMs()).isEqualTo(600_000); // default kept under a partial block
        assertThat(a.webhook().url()).isEqualTo("https://hooks.example.com/pidpool");
        assertThat(a.webhook().maxAttempts()).isEqualTo(10);
        assertThat(a.massFailureShare()).isEqualTo(0.3);
        assertThat(a.cooldownAfterFailures()).isEqualTo(5);
        assertThat(EnvironmentKeys.all())
                .extracting(EnvironmentKeys.Key::envName)
                .contains("PIDPOOL_ADVICE_AUTO_APPLY_ENABLED", "PIDPOOL_ADVICE_WEBHOOK_URL");
    }

    @Test
    void badValuesNameTheirKey() {
        String yaml = ConfigLoaderTest.DESIGN_EXAMPLE
                + """
                advice:
                  utilisationPercents: [80, 80]
                  massFailureShare: 0
                  tariff: [ { unitPrice: 0.01 }, { unitPrice: 0.02 } ]
                  webhook: { url: "ftp://x/y" }
                  autoApply: { maxMovesPerInterval: 0 }
                """;
        ConfigException e = ConfigLoaderTest.fail(yaml, Map.of());
        assertThat(e).isNotNull();
        assertThat(e.problems())
                .extracting(ConfigException.Problem::key)
                .contains(
                        "advice.utilisationPercents",
                        "advice.massFailureShare",
                        "advice.tariff[0].size",
                        "advice.webhook.url",
                        "advice.autoApply.maxMovesPerInterval");
        assertThat(ConfigLoaderTest.fail(
                                ConfigLoaderTest.DESIGN_EXAMPLE, Map.of("PIDPOOL_ADVICE_UTILISATION_PERCENTS", "[0]"))
                        .problems())
                .extracting(ConfigException.Problem::key)
                .containsExactly("advice.utilisationPercents");
    }
}
