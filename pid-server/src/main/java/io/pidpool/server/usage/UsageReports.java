package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.UsageReport;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The read side of usage monitoring: the latest {@link UsageReport} (per-PID and per-module used,
 * remaining, utilisation, projected month-end usage and overage cost, see {@code
 * io.pidpool.core.advice}), for alerts, recommendations, {@code /metrics}, {@code /api/v1/usage} and
 * the console. Described in {@code docs/usage-monitoring.md}.
 *
 * <p>On the leader a timer scans Redis every {@code monitoring.scanIntervalMs} and publishes the
 * result; {@link #current()} on a follower (or before the first scan) runs one scan on demand, at
 * most one per interval, so every server can answer.
 *
 * <p>Concurrency: implementations are thread-safe; reports are immutable.
 */
public interface UsageReports {
    /** The newest report this server has, however old; never blocks, never touches Redis. */
    Optional<UsageReport> latest();

    /**
     * A report at most one scan interval old: the latest if fresh enough, else one scanned now.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code UNAVAILABLE} when Redis or the database
     *     cannot be read
     */
    UsageReport current();

    /**
     * Calls {@code listener} with every report the leader's timer publishes (on the timer's thread,
     * after it is published; a listener that throws is logged and does not stop the others). Not
     * called for on-demand scans of followers, so alerting on it runs once per cluster.
     */
    void onScan(Consumer<UsageReport> listener);

    /** A fixed report, e.g. for tests of consumers. */
    static UsageReports of(UsageReport report) {
        requireNonNull(report, "report");
        return new UsageReports() {
            @Override
            public Optional<UsageReport> latest() {
                return Optional.of(report);
            }

            @Override
            public UsageReport current() {
                return report;
            }

            @Override
            public void onScan(Consumer<UsageReport> listener) {
                requireNonNull(listener, "listener");
            }
        };
    }
}
