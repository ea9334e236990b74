package io.pidpool.client.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pidpool.client.internal.ClientObserver;
import io.pidpool.client.internal.ClientObserver.Callback;
import io.pidpool.client.internal.ClientObserver.RefundOutcome;
import io.pidpool.client.internal.RevokeCause;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link PidClientMetrics} alone: names, tags, sampling and removal, with a fake client. */
class PidClientMetricsTest {
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final AtomicInteger held = new AtomicInteger();

    private final ClientObserver.Gauges gauges = new ClientObserver.Gauges() {
        @Override
        public int heldPids() {
            return held.get();
        }

        @Override
        public double leaseMarginSeconds() {
            return 1.5;
        }
    };

    @Test
    void everySeriesExistsFromTheStartAndCountsItsEvents() {
        ClientObserver metrics = PidClientMetrics.observer(registry);
        metrics.started("fin#risk#scorer", gauges);

        assertThat(registry.get("pidpool.client.revocations").counters()).hasSize(RevokeCause.values().length);
        assertThat(registry.get("pidpool.client.refunds").counters()).hasSize(RefundOutcome.values().length);
        assertThat(registry.get("pidpool.client.permits").counters()).hasSize(3);
        assertThat(registry.get("pidpool.client.callback.duration").timers()).hasSize(6);

        held.set(3);
        assertThat(registry.get("pidpool.client.held.pids").gauge().value()).isEqualTo(3.0);
        assertThat(registry.get("pidpool.client.lease.margin").gauge().value()).isEqualTo(1.5);

        metrics.revoked(RevokeCause.SESSION);
        metrics.revoked(RevokeCause.SESSION);
        metrics.callback(Callback.ON_ASSIGNED, true, TimeUnit.MILLISECONDS.toNanos(40));
        metrics.permit(true);
        metrics.permit(false);
        metrics.permitError();
        metrics.refund(RefundOutcome.ERROR);

        assertThat(registry.get("pidpool.client.revocations")
                        .tag("cause", "session")
                        .counter()
                        .count())
                .isEqualTo(2);
        assertThat(registry.get("pidpool.client.callback.duration")
                        .tag("callback", "onAssigned")
                        .tag("outcome", "ok")
                        .timer()
                        .totalTime(TimeUnit.MILLISECONDS))
                .isEqualTo(40.0);
        assertThat(registry.get("pidpool.client.permits")
                        .tag("result", "error")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("pidpool.client.refunds")
                        .tag("outcome", "error")
                        .counter()
                        .count())
                .isEqualTo(1);
        assertThat(registry.get("pidpool.client.held.pids").gauge().getId().getTag("module"))
                .isEqualTo("fin#risk#scorer");

        metrics.closed();
        assertThat(registry.getMeters()).isEmpty();
    }

    @Test
    void twoClientsInOneRegistryKeepTheirOwnGauges() {
        ClientObserver a = PidClientMetrics.observer(registry);
        ClientObserver b = PidClientMetrics.observer(registry);
        a.started("m#a#x", gauges);
        b.started("m#a#x", gauges);
        assertThat(registry.get("pidpool.client.held.pids").gauges()).hasSize(2);
        a.closed();
        assertThat(registry.get("pidpool.client.held.pids").gauges()).hasSize(1);
    }
}
