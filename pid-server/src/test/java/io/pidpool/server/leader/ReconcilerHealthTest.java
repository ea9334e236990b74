package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.HealthReport;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Account health on the leader's side: a holder's report (in its PID node) puts the PID into cooldown,
 * withdraws it, stores the end time and alerts; the PID is handed to nobody until the end; the retry
 * policy for a throwing {@code onAssigned} ends in the same cooldown. Manual time only.
 */
class ReconcilerHealthTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final Epoch E = new Epoch(2);
    static final Duration GRACE = Duration.ofSeconds(2);
    static final Duration COOLDOWN = Duration.ofMinutes(10);
    static final long T0 = 1_000_000_000L;

    final LeaderSettings settings = LeaderSettings.defaults()
            .withGrace(GRACE)
            .withFailurePolicy(Duration.ofSeconds(30), 3, Duration.ofSeconds(1), COOLDOWN);
    final ManualClock clock = ManualClock.at("2026-11-21T10:00:00Z");
    final Reconciler reconciler = new Reconciler(ViewFixture.LAYOUT, settings, clock);
    final TermBookkeeping state = new TermBookkeeping();
    final PlacementPolicy policy =
            new PlannerPlacement(PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ZERO));
    final ViewFixture fx = new ViewFixture();
    DbView db = new DbFixture().module(M, 2, "p1", "p2").view();

    Reconciler.Decision decide(long now) {
        Reconciler.Decision d = reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), now);
        d.pidUpdates().forEach(p -> db.replay(new DbChange.PidPut(p))); // as PassRunner does after the pass
        return d;
    }

    static List<Intent> of(Reconciler.Decision d, Intent.Kind kind) {
        return d.intents().stream().filter(i -> i.kind() == kind).toList();
    }

    static boolean adds(Reconciler.Decision d, String pid) {
        return of(d, Intent.Kind.ADD).stream().anyMatch(i -> i.pid().equals(pid));
    }

    String reported(InstanceKey holder, String pid, PidState state, String error, HealthReport report) {
        PidNode node = new PidNode(pid, state, E, 11, DbFixture.payload(pid), error).withReport(report);
        return fx.raw(ViewFixture.LAYOUT.pid(holder.module(), holder.instance(), pid), node.encode());
    }

    @Test
    void aReportedLoginFailureWithdrawsThePidStoresTheCooldownAlertsAndHandsItToNobodyUntilItEnds() {
        InstanceKey a = fx.instance(M, "i-a", 11, true);
        InstanceKey b = fx.instance(M, "i-b", 12, true);
        fx.pid(a, "p1", PidState.ADDED, E, 11);
        fx.pid(b, "p2", PidState.ADDED, E, 12);
        assertThat(decide(T0).intents()).isEmpty();

        String path = reported(a, "p1", PidState.ADDED, "", HealthReport.loginFailure("password expired"));
        var d = decide(T0 + 1);

        assertThat(of(d, Intent.Kind.REVOKE)).extracting(Intent::pid).containsExactly("p1");
        PidNode deleting = ReconcilerTest.written(of(d, Intent.Kind.REVOKE).get(0));
        assertThat(deleting.state()).isEqualTo(PidState.DELETING);
        assertThat(deleting.hasReport()).isFalse();
        assertThat(d.pidUpdates()).extracting(PidRecord::status).containsExactly(PidAvailability.COOLDOWN);
        Instant until = clock.instant().plus(COOLDOWN);
        assertThat(d.cooldownStarts()).singleElement().satisfies(c -> {
            assertThat(c.pidId()).isEqualTo("p1");
            assertThat(c.until()).isEqualTo(until);
            assertThat(c.cause()).contains("LOGIN_FAILURE", "password expired", "i-a");
        });
        assertThat(d.alerts())
                .anyMatch(m -> m.startsWith("ALERT PID p1 LOGIN_FAILURE (password expired)") && m.contains("cooldown"));

        // the same report seen again (the revoke is in flight, then answered): no second cooldown or alert
        state.replay(new TermEvent.WriteSettled(of(d, Intent.Kind.REVOKE).get(0)));
        fx.pid(a, "p1", PidState.DELETED, E, 11);
        var removal = decide(T0 + 2);
        assertThat(of(removal, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(removal.cooldownStarts()).isEmpty();
        assertThat(removal.alerts()).noneMatch(m -> m.contains("LOGIN_FAILURE"));
        state.replay(
                new TermEvent.WriteSettled(of(removal, Intent.Kind.REMOVE_NODE).get(0)));
        fx.delete(path);

        // b holds one PID of two, a none: whoever is short, p1 goes nowhere during the cooldown
        for (long t = T0 + 3;
                t < T0 + COOLDOWN.toNanos();
                t += Duration.ofMinutes(1).toNanos()) {
            assertThat(adds(decide(t), "p1")).as("at %d", t).isFalse();
        }
        assertThat(adds(decide(T0 + 1 + COOLDOWN.toNanos() - 1), "p1")).isFalse();

        var end = decide(T0 + 1 + COOLDOWN.toNanos());
        assertThat(end.cooldownEnds()).containsExactly("p1");
        assertThat(end.pidUpdates()).extracting(PidRecord::status).containsExactly(PidAvailability.ACTIVE);
        assertThat(end.alerts()).contains("PID p1 leaves cooldown");
        assertThat(adds(decide(T0 + 2 + COOLDOWN.toNanos()), "p1")).isTrue();
    }

    /**
     * The holder's {@code onRevoked} threw: it answers DELETING + error instead of DELETED. It may
     * still be logged in, so the PID stays with it (nothing re-sent, handed to nobody) until the
     * holder's grace period has passed since the leader learned of the failure; then the node is
     * removed and the PID is free.
     */
    @Test
    void aFailedLogoutKeepsThePidWithItsHolderForTheGracePeriodThenFreesIt() {
        InstanceKey a = fx.instance(M, "i-a", 11, true);
        InstanceKey b = fx.instance(M, "i-b", 12, true);
        fx.pid(b, "p2", PidState.ADDED, E, 12);
        PidNode failed = new PidNode(
                "p1", PidState.DELETING, E, 11, DbFixture.payload("p1"), "onRevoked failed: logout timed out");
        fx.raw(ViewFixture.LAYOUT.pid(M, a.instance(), "p1"), failed.encode());

        var learned = decide(T0);
        assertThat(learned.intents()).isEmpty(); // not removed, not re-sent, not added elsewhere
        assertThat(learned.alerts())
                .anyMatch(m -> m.startsWith("ALERT PID p1") && m.contains("onRevoked failed: logout timed out"));
        for (long t = T0 + 1; t < T0 + GRACE.toNanos(); t += GRACE.toNanos() / 4) {
            var d = decide(t);
            assertThat(d.intents()).as("at +%d ns", t - T0).isEmpty();
            assertThat(d.alerts()).noneMatch(m -> m.contains("p1"));
        }
        assertThat(decide(T0 + GRACE.toNanos() - 1).intents()).isEmpty();

        var freed = decide(T0 + GRACE.toNanos());
        assertThat(of(freed, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(adds(freed, "p1")).isFalse(); // delete first; added once the removal is seen
        assertThat(state.failures("p1")).isZero();
    }

    @Test
    void aConflictReportedWithAFailedAddingCoolsDownAtOnceWithoutCountingAFailure() {
        InstanceKey a = fx.instance(M, "i-a", 11, true);
        reported(a, "p1", PidState.ADDING, "login refused", HealthReport.loginConflict("logged in elsewhere"));

        var d = decide(T0);

        assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(state.failures("p1")).isZero();
        assertThat(state.cooldowns()).containsKey("p1");
        assertThat(d.cooldownStarts()).extracting(Cooldown::pidId).containsExactly("p1");
        assertThat(d.alerts()).anyMatch(m -> m.contains("LOGIN_CONFLICT (logged in elsewhere)"));
    }

    @Test
    void aThrowingOnAssignedBacksOffThenEndsInTheSameStoredCooldown() {
        InstanceKey a = fx.instance(M, "i-a", 11, true);
        long now = T0;
        Reconciler.Decision last = null;
        for (int failure = 1; failure <= 3; failure++) {
            String path = fx.failedPid(a, "p1", E, 11);
            last = decide(now);
            assertThat(adds(last, "p1")).isFalse();
            for (Intent i : last.intents()) {
                state.replay(new TermEvent.WriteSettled(i));
            }
            fx.delete(path);
            if (failure < 3) {
                assertThat(last.cooldownStarts()).isEmpty();
                assertThat(adds(decide(now + 1), "p1")).as("backing off").isFalse();
                now += settings.retryBackoff().toNanos();
            }
        }
        assertThat(last.cooldownStarts()).singleElement().satisfies(c -> {
            assertThat(c.until()).isEqualTo(clock.instant().plus(COOLDOWN));
            assertThat(c.cause()).contains("3 times");
        });
        long cooled = now;
        assertThat(adds(decide(cooled + COOLDOWN.toNanos() - 1), "p1")).isFalse();
        assertThat(decide(cooled + COOLDOWN.toNanos()).cooldownEnds()).containsExactly("p1");
        assertThat(adds(decide(cooled + COOLDOWN.toNanos() + 1), "p1")).isTrue();
        assertThat(state.failures("p1")).as("counted from zero again").isZero();
    }

    @Test
    void aReportFromAnInstanceThatLeftRightAfterwardsStillCoolsThePidDown() {
        InstanceKey a = fx.instance(M, "i-a", 11, true);
        InstanceKey b = fx.instance(M, "i-b", 12, true);
        fx.pid(a, "p1", PidState.ADDED, E, 11);
        fx.pid(b, "p2", PidState.ADDED, E, 12);
        decide(T0);
        String path = reported(a, "p1", PidState.ADDED, "", HealthReport.loginConflict("second terminal"));
        fx.vanish(a);

        var d = decide(T0 + 1);
        assertThat(state.cooldowns()).containsKey("p1");
        assertThat(d.cooldownStarts()).extracting(Cooldown::pidId).containsExactly("p1");
        assertThat(d.alerts()).anyMatch(m -> m.contains("LOGIN_CONFLICT (second terminal)"));
        // released after the grace period, and then handed to nobody (b would be the only taker)
        var released = decide(T0 + 1 + GRACE.toNanos());
        assertThat(of(released, Intent.Kind.REMOVE_NODE))
                .extracting(Intent::pid)
                .contains("p1");
        released.intents().forEach(i -> state.replay(new TermEvent.WriteSettled(i)));
        fx.delete(path);
        for (long t = T0 + 2 + GRACE.toNanos();
                t < T0 + COOLDOWN.toNanos();
                t += Duration.ofMinutes(1).toNanos()) {
            assertThat(adds(decide(t), "p1")).as("at %d", t).isFalse();
        }
        assertThat(decide(T0 + 1 + COOLDOWN.toNanos()).cooldownEnds()).containsExactly("p1");
        assertThat(adds(decide(T0 + 2 + COOLDOWN.toNanos()), "p1"))
                .as("after the cooldown")
                .isTrue();
    }

    @Test
    void aPidWhoseStatusSaysCooldownButHasNoStoredEndStartsOverAndStoresOne() {
        db.replay(new DbChange.PidPut(DbFixture.account(M, "p2").withStatus(PidAvailability.COOLDOWN)));
        fx.instance(M, "i-a", 11, true);

        var d = decide(T0);

        assertThat(adds(d, "p2")).isFalse();
        assertThat(adds(d, "p1")).isTrue();
        assertThat(d.cooldownStarts()).extracting(Cooldown::pidId).containsExactly("p2");
        assertThat(state.cooldowns().get("p2")).isEqualTo(T0 + COOLDOWN.toNanos());
    }
}
