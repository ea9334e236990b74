package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.advice.UsageAssembly;
import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UsageMetricsTest {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");

    static UsageReport report() {
        return UsageProjector.blended()
                .project(UsageAssembly.assemble(
                                Instant.parse("2026-11-16T00:00:00Z"),
                                new MonthlyWindow(ZoneOffset.UTC),
                                OverageTariff.of(OverageTariff.Tier.unbounded("0.25")),
                                List.of(new ModuleFacts(ModuleConfig.of(M, 1), 1)),
                                List.of(
                                        new PidFacts("p1", M, PidAvailability.ACTIVE, 100, 0),
                                        new PidFacts("zero", M, PidAvailability.DISABLED, 0, 0)),
                                Map.of("p1", 40L, "zero", 2L))
                        .snapshot());
    }

    @Test
    void perPidAndPerModuleFamiliesAndServerGauges() {
        UsageMetrics metrics = new UsageMetrics(
                UsageReports.of(report()),
                new UsageMetrics.ServerState() {
                    @Override
                    public boolean isLeader() {
                        return true;
                    }

                    @Override
                    public long epoch() {
                        return 7;
                    }

                    @Override
                    public long heldPids() {
                        return 1;
                    }
                },
                null,
                null);
        String text = metrics.scrape();
        assertThat(text)
                .contains("# TYPE pidpool_pid_used gauge\n")
                .contains("pidpool_pid_used{module=\"fin#risk#scorer\",pid=\"p1\"} 40\n")
                .contains("pidpool_pid_remaining{module=\"fin#risk#scorer\",pid=\"p1\"} 60\n")
                .contains("pidpool_pid_utilisation{module=\"fin#risk#scorer\",pid=\"p1\"} 0.4\n")
                .contains("pidpool_pid_utilisation{module=\"fin#risk#scorer\",pid=\"zero\"} +Inf\n")
                // zero's 2 commands are overage at 0.25 each
                .contains("pidpool_pid_projected_overage_cost{module=\"fin#risk#scorer\",pid=\"zero\"} 0.50\n")
                .contains("pidpool_module_used{module=\"fin#risk#scorer\"} 42.0")
                .contains("pidpool_server_leader 1.0")
                .contains("pidpool_server_epoch 7.0")
                .contains("pidpool_server_held_pids 1.0");
        // one HELP/TYPE per family, however many PIDs
        assertThat(text.split("# TYPE pidpool_pid_used gauge", -1)).hasSize(2);
        assertThat(metrics.scrape()).isEqualTo(text);
    }
}
