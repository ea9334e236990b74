package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.QuotaMonth;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Permit deduction ids: {@code <yyyyMM>-<shard>-<snowflake>}, e.g. {@code 202611-7-40329182736384}.
 *
 * <p>A refund names only the deduction id ({@code PidClient.refund(deductionId, refundId, n)}), yet
 * the ledger keys refunds by PID and month. The month and the shard are therefore encoded in the id,
 * and the PID is found in the shard's month index ({@code pidpool:{c:s}:ix:<month>}), which the
 * deduct script writes in the same step as the deduction. So any process can refund a permit by id,
 * after a restart of the client too, for as long as the month's data is kept; a PID id cannot be
 * encoded itself (up to 128 characters, '@' allowed, while ids are 64-character tokens). The
 * Snowflake part makes the id unique across clients and time.
 *
 * <p>Pure functions; thread-safe.
 */
public final class DeductionIds {
    private static final Pattern FORMAT = Pattern.compile("(\\d{4})(\\d{2})-(\\d{1,4})-(\\d{1,19})");

    /** A decoded permit deduction id. */
    public record Parsed(QuotaMonth month, int shard, long snowflake) {}

    private DeductionIds() {}

    public static String encode(QuotaMonth month, int shard, long snowflake) {
        requireArgument(shard >= 0 && shard < QuotaKeys.MAX_SHARDS, "shard", "shard out of range: %d", shard);
        requireArgument(snowflake >= 0, "snowflake", "Snowflake ids are never negative, was %d", snowflake);
        int m = month.value().getMonthValue();
        return new StringBuilder(32)
                .append(month.value().getYear()) // 2000..9999: always four digits
                .append(m < 10 ? "0" : "")
                .append(m)
                .append('-')
                .append(shard)
                .append('-')
                .append(snowflake)
                .toString();
    }

    /** Decodes an id made by {@link #encode}; anything else is {@code INVALID_ARGUMENT} on {@code deductionId}. */
    public static Parsed parse(String deductionId) {
        Matcher m = deductionId == null ? null : FORMAT.matcher(deductionId);
        if (m == null || !m.matches()) {
            throw PidPoolException.invalid(
                    "deductionId", "not a permit deduction id (<yyyyMM>-<shard>-<snowflake>): '%s'", deductionId);
        }
        QuotaMonth month;
        long snowflake;
        try {
            month = QuotaMonth.of(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
            snowflake = Long.parseLong(m.group(4));
        } catch (PidPoolException | NumberFormatException e) {
            throw PidPoolException.invalid("deductionId", "not a permit deduction id: '%s'", deductionId);
        }
        return new Parsed(month, Integer.parseInt(m.group(3)), snowflake);
    }
}
