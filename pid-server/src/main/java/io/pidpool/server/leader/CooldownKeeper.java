package io.pidpool.server.leader;

import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.HealthReport;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * Cooldowns and failure counts within a pass: ends the cooldowns that are over, puts a PID that failed
 * {@link LeaderSettings#maxFailures()} times in a row or was reported by its holder into cooldown, and
 * stores the end times (they survive a change of leader).
 */
final class CooldownKeeper {
    private final ReconcilePass p;
    private final ZkView view;
    private final DbView db;
    private final TermBookkeeping state;
    private final long now;
    private final Reconciler.Scope scope;
    private final List<String> alerts;
    private final List<PidRecord> pidUpdates;
    private final Set<String> updatedPids;
    private final List<Cooldown> cooldownStarts;
    private final Set<String> cooldownEnds;
    private final LeaderSettings settings;
    private final Clock clock;

    CooldownKeeper(ReconcilePass p, LeaderSettings settings, Clock clock) {
        this.p = p;
        this.view = p.view;
        this.db = p.db;
        this.state = p.state;
        this.now = p.now;
        this.scope = p.scope;
        this.alerts = p.alerts;
        this.pidUpdates = p.pidUpdates;
        this.updatedPids = p.updatedPids;
        this.cooldownStarts = p.cooldownStarts;
        this.cooldownEnds = p.cooldownEnds;
        this.settings = settings;
        this.clock = clock;
    }

    void cooldowns() {
        for (var e : List.copyOf(state.cooldowns().entrySet())) {
            if (now - e.getValue() >= 0) {
                PidRecord account = db.pid(e.getKey());
                if (account != null && account.status() == PidAvailability.COOLDOWN) {
                    pidUpdates.add(account.withStatus(PidAvailability.ACTIVE));
                    updatedPids.add(account.id());
                }
                p.emit(new TermEvent.CooldownEnded(e.getKey()));
                cooldownEnds.add(e.getKey());
                alerts.add("PID " + e.getKey() + " leaves cooldown");
            }
        }
        if (!scope.full()) {
            return; // the database view changes only before full passes (load, batches)
        }
        // COOLDOWN without a stored end (stored before cooldowns had one, or the store failed):
        // this term does not know since when, so it starts over
        for (PidRecord account : db.pids().values()) {
            if (account.status() == PidAvailability.COOLDOWN
                    && !state.cooldowns().containsKey(account.id())
                    && !updatedPids.contains(account.id())) {
                startCooldown(account.id(), "COOLDOWN without a stored end time; started over by this leader");
            }
        }
    }

    /**
     * Puts {@code pid} into cooldown for {@link LeaderSettings#cooldown()} from now: status COOLDOWN,
     * the end time stored, handed to nobody until then (the placement sees it as unassignable and
     * withdraws it where it is held). Returns the wall-clock end.
     */
    Instant startCooldown(String pid, String cause) {
        p.emit(new TermEvent.CooldownStarted(pid, now + settings.cooldown().toNanos()));
        Instant wall = clock.instant();
        Instant until = wall.plus(settings.cooldown());
        PidRecord account = db.pid(pid);
        if (account != null) {
            if (account.status() == PidAvailability.ACTIVE && updatedPids.add(pid)) {
                pidUpdates.add(account.withStatus(PidAvailability.COOLDOWN));
            }
            cooldownEnds.remove(pid);
            cooldownStarts.removeIf(c -> c.pidId().equals(pid));
            cooldownStarts.add(new Cooldown(pid, until, cause, wall));
        }
        return until;
    }

    void failed(String pid, InstanceKey at, String reason) {
        long retry = now + settings.retryBackoff().toNanos();
        p.emit(new TermEvent.AddFailed(pid, at, reason, retry));
        alerts.add("PID " + pid + " could not be taken up by " + at + ": " + reason);
        if (state.failures(pid) >= settings.maxFailures() && !state.cooldowns().containsKey(pid)) {
            int failures = state.failures(pid);
            Instant until = startCooldown(
                    pid, "could not be taken up " + failures + " times in a row; last by " + at + ": " + reason);
            alerts.add("ALERT PID " + pid + " failed " + failures + " times; cooldown for " + settings.cooldown()
                    + " (until " + until + ")");
        }
    }

    /**
     * The holder reported a login failure or conflict: cooldown (once; a report seen again while the
     * PID cools down changes nothing) and an alert. Withdrawing the PID is the caller's part.
     */
    void reported(ZkView.PidEntry entry, HealthReport report) {
        String pid = entry.pidId();
        if (state.cooldowns().containsKey(pid)) {
            return;
        }
        Instant until = startCooldown(pid, report.describe() + " reported by " + entry.holder());
        alerts.add("ALERT PID " + pid + " " + report.describe() + " reported by " + entry.holder() + "; cooldown for "
                + settings.cooldown() + " (until " + until + "), withdrawn from the instance");
    }
}
