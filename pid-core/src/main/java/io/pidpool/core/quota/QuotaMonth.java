package io.pidpool.core.quota;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import java.time.YearMonth;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * One quota window: a calendar month, keyed {@code "yyyy-MM"} (e.g. {@code "2026-11"}) in Redis keys,
 * database rows and the API. Which instant belongs to which month depends on the configured zone:
 * see {@link MonthlyWindow}.
 */
public record QuotaMonth(YearMonth value) implements Comparable<QuotaMonth> {
    private static final Pattern KEY = Pattern.compile("\\d{4}-\\d{2}");

    public QuotaMonth {
        requireNonNull(value, "month");
        if (value.getYear() < 2000 || value.getYear() > 9999) {
            throw PidPoolException.invalid("month", "month must lie within 2000-01..9999-12, was %s", value);
        }
    }

    public static QuotaMonth of(int year, int month) {
        try {
            return new QuotaMonth(YearMonth.of(year, month));
        } catch (java.time.DateTimeException e) {
            throw PidPoolException.invalid("month", "no such month: %d-%d", year, month);
        }
    }

    /** Parses {@code "yyyy-MM"}. */
    public static QuotaMonth parse(String key) {
        if (key == null || !KEY.matcher(key).matches()) {
            throw PidPoolException.invalid("month", "month must be yyyy-MM, was '%s'", key);
        }
        try {
            return new QuotaMonth(YearMonth.parse(key));
        } catch (DateTimeParseException e) {
            throw PidPoolException.invalid("month", "month must be yyyy-MM, was '%s'", key);
        }
    }

    /** {@code "yyyy-MM"}. */
    public String key() {
        return value.toString();
    }

    public QuotaMonth next() {
        return new QuotaMonth(value.plusMonths(1));
    }

    public QuotaMonth previous() {
        return new QuotaMonth(value.minusMonths(1));
    }

    @Override
    public int compareTo(QuotaMonth other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return key();
    }
}
