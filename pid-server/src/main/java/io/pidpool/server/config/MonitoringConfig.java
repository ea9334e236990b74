package io.pidpool.server.config;

/**
 * Usage monitoring and the usage ledger sync (docs/usage-monitoring.md). The overage tariff is
 * {@code advice.tariff} and the access to {@code /metrics} is {@code http.metricsRequireToken}: one
 * setting each, shared with alerts and the HTTP API.
 *
 * @param syncIntervalMs how often every server tops up the usage-sync tasks (one per quota shard) of
 *     the in-process pid-worker; a shard's events reach the database ledger about this often
 * @param scanIntervalMs how often the leader reads every PID's usage from Redis and projects it to
 *     month end (the report behind {@code /metrics} and {@code /api/v1/usage})
 */
public record MonitoringConfig(long syncIntervalMs, long scanIntervalMs) {
    public static final long DEFAULT_SYNC_INTERVAL_MS = 5_000;
    public static final long DEFAULT_SCAN_INTERVAL_MS = 30_000;

    /** The built-in defaults (what {@code server-defaults.yml} says). */
    public static MonitoringConfig defaults() {
        return new MonitoringConfig(DEFAULT_SYNC_INTERVAL_MS, DEFAULT_SCAN_INTERVAL_MS);
    }
}
