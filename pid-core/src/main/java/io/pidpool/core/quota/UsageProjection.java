package io.pidpool.core.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;

/**
 * A projection of one PID's (or a module's) usage at the end of the month, from the rate so far.
 *
 * <p><b>Method.</b> {@link #linear} extrapolates the month's average rate: {@code projected = ceil(used
 * * monthLength / elapsed)}. Early in the month a few commands would extrapolate wildly, so the elapsed
 * time counts as at least {@code minElapsed} (one day by default). {@link #atRate} instead adds a
 * measured recent rate (commands per hour) over the rest of the month, for callers that keep one.
 * Projections are never below {@code used}. Pure functions; thread-safe.
 *
 * @param projected usage expected at the month's end
 * @param elapsed time since the month started, at {@code at}
 * @param length the month's length in the window's zone
 */
public record UsageProjection(
        QuotaMonth month, Instant at, long used, long projected, Duration elapsed, Duration length) {
    public static final Duration DEFAULT_MIN_ELAPSED = Duration.ofDays(1);

    public UsageProjection {
        requireNonNull(month, "month");
        requireNonNull(at, "at");
        requireArgument(used >= 0, "used", "usage is never negative, was %d", used);
        requireArgument(projected >= used, "projected", "a projection is never below usage");
    }

    /** Linear extrapolation of the month's average rate, with {@link #DEFAULT_MIN_ELAPSED}. */
    public static UsageProjection linear(MonthlyWindow window, Instant now, long used) {
        return linear(window, now, used, DEFAULT_MIN_ELAPSED);
    }

    public static UsageProjection linear(MonthlyWindow window, Instant now, long used, Duration minElapsed) {
        requireNonNull(window, "window");
        requireNonNull(now, "now");
        requireNonNull(minElapsed, "minElapsed");
        requireArgument(used >= 0, "used", "usage is never negative, was %d", used);
        requireArgument(!minElapsed.isNegative() && !minElapsed.isZero(), "minElapsed", "minElapsed must be > 0");
        QuotaMonth month = window.monthOf(now);
        Duration length = window.length(month);
        Duration elapsed = window.elapsed(now);
        long basisMillis =
                Math.max(1, Math.min(length.toMillis(), Math.max(elapsed.toMillis(), minElapsed.toMillis())));
        BigInteger[] qr = BigInteger.valueOf(used)
                .multiply(BigInteger.valueOf(length.toMillis()))
                .divideAndRemainder(BigInteger.valueOf(basisMillis));
        BigInteger ceil = qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
        long projected = Math.max(used, saturate(ceil));
        return new UsageProjection(month, now, used, projected, elapsed, length);
    }

    /** {@code used} plus {@code commandsPerHour} over the rest of the month. */
    public static UsageProjection atRate(MonthlyWindow window, Instant now, long used, double commandsPerHour) {
        requireNonNull(window, "window");
        requireNonNull(now, "now");
        requireArgument(used >= 0, "used", "usage is never negative, was %d", used);
        requireArgument(
                Double.isFinite(commandsPerHour) && commandsPerHour >= 0,
                "rate",
                "rate must be a finite number >= 0, was %s",
                commandsPerHour);
        QuotaMonth month = window.monthOf(now);
        Duration length = window.length(month);
        Duration elapsed = window.elapsed(now);
        double remainingHours = (length.toMillis() - elapsed.toMillis()) / 3_600_000.0;
        BigDecimal more =
                BigDecimal.valueOf(commandsPerHour * remainingHours).setScale(0, java.math.RoundingMode.CEILING);
        long projected = saturate(BigInteger.valueOf(used).add(more.toBigInteger()));
        return new UsageProjection(month, now, used, projected, elapsed, length);
    }

    /** The overage this projection would cost at month end. */
    public BigDecimal projectedOverageCost(OverageTariff tariff, long monthlyQuota) {
        return requireNonNull(tariff, "tariff").overageCost(projected, monthlyQuota);
    }

    /** Whether usage is on course to pass {@code limit} before the month ends. */
    public boolean projectedToExceed(long limit) {
        return projected > limit;
    }

    private static long saturate(BigInteger value) {
        return value.bitLength() < 63 ? value.longValueExact() : Long.MAX_VALUE;
    }
}
