package io.pidpool.server.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertPolicy;
import io.pidpool.core.advice.AlertRules;
import io.pidpool.core.advice.AlertState;
import io.pidpool.core.advice.ModuleUsage;
import io.pidpool.core.advice.PidUsage;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.advice.UsageSnapshot;
import io.pidpool.core.fake.InMemoryAlertStore;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.testing.ManualClock;
import io.pidpool.server.leader.AlertSink;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The alert service over the in-memory store: de-duplication, resolution, notifications. */
class AlertServiceTest {
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");

    record Notice(AlertNotifier.Event event, StoredAlert alert) {}

    final ManualClock clock = ManualClock.at("2026-11-16T00:00:00Z");
    final InMemoryAlertStore store = new InMemoryAlertStore();
    final List<Notice> notices = new CopyOnWriteArrayList<>();
    final AtomicLong ids = new AtomicLong();
    final AlertService service =
            new AlertService(store, ids::incrementAndGet, clock, (e, a) -> notices.add(new Notice(e, a)));
    final AlertRules rules = new AlertRules(AlertPolicy.defaults());

    @AfterEach
    void close() {
        service.close();
    }

    /** Waits until the service's thread has done what was queued so far. */
    void drain() throws Exception {
        service.executor().submit(() -> {}).get(10, TimeUnit.SECONDS);
    }

    UsageReport report(long used) {
        var snapshot = new UsageSnapshot(
                clock.instant(),
                new MonthlyWindow(ZoneOffset.UTC),
                OverageTariff.free(),
                List.of(ModuleUsage.of(ModuleConfig.of(FIN, 1), 1, used)),
                List.of(new PidUsage("u1", FIN, 1_000, 100_000, used, PidAvailability.ACTIVE)));
        return UsageProjector.blended().project(snapshot);
    }

    void evaluate(long used) {
        List<io.pidpool.core.advice.Alert> open = service.open().stream()
                .filter(a -> AdviceMonitor.RULE_KINDS.contains(a.alert().kind()))
                .map(StoredAlert::alert)
                .toList();
        service.apply(rules.evaluate(report(used), List.of(), open, clock.instant()));
    }

    @Test
    void aConditionThatKeepsHoldingIsStoredAndAnnouncedOnceAndCrossing100ResolvesThe80() {
        evaluate(850);
        clock.advance(Duration.ofMinutes(1));
        evaluate(870);

        assertThat(service.open())
                .extracting(StoredAlert::key)
                .containsExactly("MODULE_UTILISATION:fin#risk#scorer:80", "PID_UTILISATION:u1:80");
        assertThat(service.open()).allSatisfy(a -> assertThat(a.occurrences()).isEqualTo(2));
        assertThat(notices).hasSize(2).allMatch(n -> n.event() == AlertNotifier.Event.RAISED);

        clock.advance(Duration.ofMinutes(1));
        evaluate(1_000);

        assertThat(service.open())
                .extracting(StoredAlert::key)
                .containsExactlyInAnyOrder("MODULE_UTILISATION:fin#risk#scorer:100", "PID_UTILISATION:u1:100");
        assertThat(notices.subList(2, notices.size()))
                .extracting(n -> n.event() + " " + n.alert().key())
                .containsExactlyInAnyOrder(
                        "RAISED MODULE_UTILISATION:fin#risk#scorer:100",
                        "RAISED PID_UTILISATION:u1:100",
                        "RESOLVED MODULE_UTILISATION:fin#risk#scorer:80",
                        "RESOLVED PID_UTILISATION:u1:80");
        assertThat(service.recent(10)).hasSize(4);
    }

    @Test
    void theLeaderSinkStoresCooldownsOnceAndResolvesThemWhenTheyEnd() throws Exception {
        AlertSink sink = service.leaderSink();
        sink.alert("ALERT PID u7 failed 3 times; cooldown for PT10M");
        sink.alert("ALERT PID u7 failed 3 times; cooldown for PT10M");
        sink.alert("PID u7 could not be taken up by fin#risk#scorer/h1: refused");
        drain();

        assertThat(service.open()).singleElement().satisfies(a -> {
            assertThat(a.key()).isEqualTo("PID_COOLDOWN:u7");
            assertThat(a.occurrences()).isEqualTo(2);
        });
        assertThat(notices).singleElement().satisfies(n -> assertThat(n.event()).isEqualTo(AlertNotifier.Event.RAISED));

        sink.alert("PID u7 leaves cooldown");
        drain();
        assertThat(service.open()).isEmpty();
        assertThat(service.recent(10)).singleElement().satisfies(a -> assertThat(a.state())
                .isEqualTo(AlertState.RESOLVED));
        assertThat(notices).hasSize(2);
        assertThat(notices.get(1).event()).isEqualTo(AlertNotifier.Event.RESOLVED);
    }

    @Test
    void aBrakeStaysOpenThroughRuleEvaluationsUntilTheLeaderClearsIt() throws Exception {
        AlertSink sink = service.leaderSink();
        sink.alert("ALERT mass-failure brake engaged in fin#risk#scorer: 3 of 4 instances vanished; not"
                + " redistributing (maintenance mode)");
        drain();
        evaluate(0); // the rules see no plan signals: they must not resolve the leader's brake

        assertThat(service.open()).extracting(StoredAlert::key).containsExactly("BRAKE_ENGAGED:fin#risk#scorer");

        sink.cleared("signal:brake:fin#risk#scorer");
        drain();
        assertThat(service.open()).isEmpty();
    }

    @Test
    void oneOffLeaderEventsResolveWhenNotReportedForAnHour() throws Exception {
        service.leaderSink().alert("ALERT placement failed: boom");
        drain();
        assertThat(service.open()).extracting(a -> a.alert().kind()).containsExactly(AlertKind.LEADER_EVENT);

        clock.advance(AlertService.LEADER_EVENT_TTL.minusSeconds(1));
        evaluate(0);
        assertThat(service.open()).hasSize(1);
        clock.advance(Duration.ofSeconds(2));
        evaluate(0);
        assertThat(service.open()).isEmpty();
    }

    @Test
    void aFailingNotifierNeverLosesTheStoredAlert() {
        AlertService failing = new AlertService(store, ids::incrementAndGet, clock, (e, a) -> {
            throw new IllegalStateException("task table down");
        });
        try {
            failing.raise(new io.pidpool.core.advice.Alert(
                    "PROJECTED_OVERAGE:fin#risk#scorer",
                    AlertKind.PROJECTED_OVERAGE,
                    io.pidpool.core.advice.Severity.WARNING,
                    FIN.toString(),
                    "over",
                    clock.instant()));
            assertThat(failing.open()).hasSize(1);
        } finally {
            failing.close();
        }
    }
}
