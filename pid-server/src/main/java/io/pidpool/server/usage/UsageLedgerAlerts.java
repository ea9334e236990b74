package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertRules;
import io.pidpool.core.advice.Severity;
import java.time.Instant;
import java.util.Optional;

/**
 * The alert for a sync pass whose events the database ledger refused (docs/usage-sync.md §1a): one
 * key per shard, {@code USAGE_LEDGER:shard-<n>}. WARNING when the ledger caught up from Redis in the
 * same pass (the figures agree again), CRITICAL when a PID-month still differs.
 */
public final class UsageLedgerAlerts {
    private static final int MAX_LISTED = 3;

    private UsageLedgerAlerts() {}

    /** The alert key of {@code shard}. */
    public static String key(int shard) {
        return AlertKind.USAGE_LEDGER + ":shard-" + shard;
    }

    /** The alert {@code report} calls for, if it dropped events. */
    public static Optional<Alert> of(SyncReport report, Instant now) {
        requireNonNull(report, "report");
        requireNonNull(now, "now");
        if (report.orphans().isEmpty()) {
            return Optional.empty();
        }
        boolean reconciled = report.stillDrifting().isEmpty();
        StringBuilder message = new StringBuilder()
                .append("usage shard ")
                .append(report.shard())
                .append(": ")
                .append(report.orphans().size())
                .append(" usage event(s) refused by the database ledger (")
                .append(String.join(
                        "; ",
                        report.orphans()
                                .subList(
                                        0, Math.min(MAX_LISTED, report.orphans().size()))))
                .append(')');
        if (reconciled) {
            message.append("; the ledger caught up from Redis and agrees with it again");
        } else {
            message.append("; the ledger still differs from Redis: ")
                    .append(String.join(
                            "; ",
                            report.stillDrifting()
                                    .subList(
                                            0,
                                            Math.min(
                                                    MAX_LISTED,
                                                    report.stillDrifting().size()))));
        }
        String text = message.length() > 3_900 ? message.substring(0, 3_900) + "…" : message.toString();
        return Optional.of(new Alert(
                key(report.shard()),
                AlertKind.USAGE_LEDGER,
                reconciled ? Severity.WARNING : Severity.CRITICAL,
                AlertRules.CLUSTER,
                text,
                now));
    }
}
