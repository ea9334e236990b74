package io.pidpool.server.config;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.OverageTariff;
import java.util.ArrayList;
import java.util.List;

/**
 * Usage monitoring and the usage ledger sync (docs/usage-monitoring.md).
 *
 * @param syncIntervalMs how often every server tops up the usage-sync tasks (one per quota shard) of
 *     the in-process pid-worker; a shard's events reach the database ledger about this often
 * @param scanIntervalMs how often the leader reads every PID's usage from Redis and projects it to
 *     month end (the report behind {@code /metrics} and {@code /api/v1/usage})
 * @param metricsAuth whether {@code GET /metrics} needs a bearer token (viewer or better); default
 *     open, as Prometheus scrapers usually run inside the network
 * @param tariff the overage price of every PID: tiers {@code <commands>:<unit price>} separated by
 *     commas, the last one a bare unbounded price, e.g. {@code 1000:0.01,9000:0.008,0.005}; empty =
 *     overage is free
 */
public record MonitoringConfig(long syncIntervalMs, long scanIntervalMs, boolean metricsAuth, String tariff) {
    public static final long DEFAULT_SYNC_INTERVAL_MS = 5_000;
    public static final long DEFAULT_SCAN_INTERVAL_MS = 30_000;

    /** The built-in defaults (what {@code server-defaults.yml} says). */
    public static MonitoringConfig defaults() {
        return new MonitoringConfig(DEFAULT_SYNC_INTERVAL_MS, DEFAULT_SCAN_INTERVAL_MS, false, "");
    }

    /** {@link #tariff()} parsed; {@code INVALID_ARGUMENT} (field {@code monitoring.tariff}) if malformed. */
    public OverageTariff overageTariff() {
        return parseTariff(tariff);
    }

    /** Parses the {@code tariff} text (see the record's description). */
    public static OverageTariff parseTariff(String text) {
        if (text == null || text.isBlank()) {
            return OverageTariff.free();
        }
        String[] parts = text.split(",", -1);
        List<OverageTariff.Tier> tiers = new ArrayList<>(parts.length);
        try {
            for (int i = 0; i < parts.length; i++) {
                String part = parts[i].trim();
                int colon = part.indexOf(':');
                boolean last = i == parts.length - 1;
                if (last != (colon < 0)) {
                    throw PidPoolException.invalid(
                            "monitoring.tariff",
                            "tier %d must be %s, was '%s' (e.g. 1000:0.01,0.005)",
                            i + 1,
                            last ? "a bare unbounded price" : "<commands>:<unit price>",
                            part);
                }
                tiers.add(
                        last
                                ? OverageTariff.Tier.unbounded(part)
                                : OverageTariff.Tier.of(
                                        Long.parseLong(part.substring(0, colon).trim()),
                                        part.substring(colon + 1).trim()));
            }
            return OverageTariff.of(tiers);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid(
                    "monitoring.tariff", "tier sizes must be integers and prices decimals, was '%s'", text);
        } catch (PidPoolException e) {
            if ("monitoring.tariff".equals(e.field())) {
                throw e;
            }
            throw PidPoolException.invalid("monitoring.tariff", "%s", e.getMessage());
        }
    }
}
