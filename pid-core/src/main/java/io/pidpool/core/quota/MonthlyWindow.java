package io.pidpool.core.quota;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;

/**
 * The monthly quota window: usage counts per calendar month in one configured zone, and resets at
 * 00:00 of the first day of each month in that zone (or the first valid local time that day, when a
 * daylight-saving gap swallows midnight). Every server and SDK of a cluster must use the same zone,
 * or they disagree about which month a command near the boundary belongs to.
 *
 * <p>Immutable and thread-safe.
 */
public final class MonthlyWindow {
    private final ZoneId zone;

    public MonthlyWindow(ZoneId zone) {
        this.zone = requireNonNull(zone, "zone");
    }

    public ZoneId zone() {
        return zone;
    }

    /** The month {@code instant} falls in. */
    public QuotaMonth monthOf(Instant instant) {
        requireNonNull(instant, "instant");
        return new QuotaMonth(java.time.YearMonth.from(instant.atZone(zone)));
    }

    /** The month it is now by {@code clock}. */
    public QuotaMonth current(Clock clock) {
        return monthOf(requireNonNull(clock, "clock").instant());
    }

    /** The first instant of {@code month}: the reset. */
    public Instant start(QuotaMonth month) {
        return month.value().atDay(1).atStartOfDay(zone).toInstant();
    }

    /** The first instant after {@code month} (exclusive end, the next reset). */
    public Instant end(QuotaMonth month) {
        return start(month.next());
    }

    public Duration length(QuotaMonth month) {
        return Duration.between(start(month), end(month));
    }

    /** When the quota of the month containing {@code instant} resets. */
    public Instant nextReset(Instant instant) {
        return end(monthOf(instant));
    }

    /** Time since the start of the month containing {@code instant}. */
    public Duration elapsed(Instant instant) {
        return Duration.between(start(monthOf(instant)), instant);
    }

    @Override
    public String toString() {
        return "MonthlyWindow[" + zone + "]";
    }
}
