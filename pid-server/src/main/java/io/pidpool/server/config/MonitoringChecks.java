package io.pidpool.server.config;

/** Validation of the {@code monitoring} block, kept apart from the loader's other rules. */
final class MonitoringChecks {
    static final long MIN_INTERVAL_MS = 100;
    static final long MAX_INTERVAL_MS = 3_600_000;

    @FunctionalInterface
    interface Rule {
        void require(boolean ok, String key, String message);
    }

    private MonitoringChecks() {}

    static void check(MonitoringConfig m, Rule rule) {
        if (m == null) {
            return; // the record fills the defaults
        }
        rule.require(
                m.syncIntervalMs() >= MIN_INTERVAL_MS && m.syncIntervalMs() <= MAX_INTERVAL_MS,
                "monitoring.syncIntervalMs",
                "must be within " + MIN_INTERVAL_MS + ".." + MAX_INTERVAL_MS + ", was " + m.syncIntervalMs());
        rule.require(
                m.scanIntervalMs() >= MIN_INTERVAL_MS && m.scanIntervalMs() <= MAX_INTERVAL_MS,
                "monitoring.scanIntervalMs",
                "must be within " + MIN_INTERVAL_MS + ".." + MAX_INTERVAL_MS + ", was " + m.scanIntervalMs());
    }
}
