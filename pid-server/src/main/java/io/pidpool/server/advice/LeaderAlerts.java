package io.pidpool.server.advice;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertRules;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns what the leader reports through its {@link io.pidpool.server.leader.AlertSink} (one line of
 * text per event, see {@code Reconciler} and {@code PlanSignals}) into stored alerts, and the
 * keys it clears into resolutions. Pure; thread-safe.
 *
 * <p>The leader's texts are its contract with this class; {@code LeaderAlertsTest} pins each form
 * and {@code AdviceIT} sees a real leader's cooldown go through. Anything not recognised that starts
 * with {@code ALERT } is still stored, as a {@link AlertKind#LEADER_EVENT} keyed by its text; any
 * other line is only logged.
 */
final class LeaderAlerts {
    private static final Pattern COOLDOWN = Pattern.compile("^ALERT PID (\\S+) failed \\d+ times; cooldown.*");
    private static final Pattern COOLDOWN_ENDS = Pattern.compile("^PID (\\S+) leaves cooldown$");
    private static final Pattern BRAKE = Pattern.compile("^ALERT mass-failure brake engaged in (\\S+): .*");
    private static final Pattern UNASSIGNABLE = Pattern.compile("^(\\S+): \\d+ PIDs have no live instance to go to$");
    private static final String BRAKE_SIGNAL = "signal:brake:";
    private static final String UNASSIGNABLE_SIGNAL = "signal:unassignable:";

    private LeaderAlerts() {}

    /** What to do with one line the leader reported. */
    sealed interface Action {}

    record Raise(Alert alert) implements Action {}

    record Resolve(String key) implements Action {}

    static Optional<Action> classify(String message, Instant now) {
        Matcher m = COOLDOWN.matcher(message);
        if (m.matches()) {
            return raise(AlertKind.PID_COOLDOWN, m.group(1), null, Severity.WARNING, message, now);
        }
        m = COOLDOWN_ENDS.matcher(message);
        if (m.matches()) {
            return Optional.of(new Resolve(AlertKind.PID_COOLDOWN + ":" + m.group(1)));
        }
        m = BRAKE.matcher(message);
        if (m.matches()) {
            return raise(AlertKind.BRAKE_ENGAGED, m.group(1), null, Severity.CRITICAL, message, now);
        }
        m = UNASSIGNABLE.matcher(message);
        if (m.matches()) {
            return raise(AlertKind.LEADER_EVENT, m.group(1), "unassignable", Severity.WARNING, message, now);
        }
        if (message.startsWith("ALERT ")) {
            // one-off events (an instance not answering DELETING, an unusable node): the text names it
            String id = Integer.toHexString(message.hashCode()).toUpperCase(Locale.ROOT);
            return raise(AlertKind.LEADER_EVENT, AlertRules.CLUSTER, id, Severity.WARNING, message, now);
        }
        return Optional.empty();
    }

    /** The alert key a cleared leader key resolves, if any. */
    static Optional<String> resolvedBy(String leaderKey) {
        if (leaderKey.startsWith(BRAKE_SIGNAL)) {
            return Optional.of(AlertKind.BRAKE_ENGAGED + ":" + leaderKey.substring(BRAKE_SIGNAL.length()));
        }
        if (leaderKey.startsWith(UNASSIGNABLE_SIGNAL)) {
            return Optional.of(
                    AlertKind.LEADER_EVENT + ":" + leaderKey.substring(UNASSIGNABLE_SIGNAL.length()) + ":unassignable");
        }
        return Optional.empty();
    }

    private static Optional<Action> raise(
            AlertKind kind, String subject, String suffix, Severity severity, String message, Instant now) {
        String key = kind + ":" + subject + (suffix == null ? "" : ":" + suffix);
        if (key.length() > StoredAlert.MAX_KEY || subject.length() > StoredAlert.MAX_SUBJECT) {
            subject = AlertRules.CLUSTER;
            key = kind + ":" + AlertRules.CLUSTER + ":" + Integer.toHexString(message.hashCode());
        }
        String text = message.startsWith("ALERT ") ? message.substring(6) : message;
        return Optional.of(new Raise(new Alert(key, kind, severity, subject, text, now)));
    }
}
