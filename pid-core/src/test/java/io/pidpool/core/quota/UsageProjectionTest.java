package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.OverageTariff.Tier;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class UsageProjectionTest {
    private final MonthlyWindow utc = new MonthlyWindow(ZoneOffset.UTC);

    @Test
    void theAverageRateSoFarIsExtrapolatedToTheMonthEnd() {
        // 10 of 30 days gone, 4000 used: 12000 at the end
        UsageProjection p = UsageProjection.linear(utc, Instant.parse("2026-11-11T00:00:00Z"), 4000);

        assertThat(p.month().key()).isEqualTo("2026-11");
        assertThat(p.elapsed()).isEqualTo(Duration.ofDays(10));
        assertThat(p.projected()).isEqualTo(12_000);
        assertThat(p.projectedToExceed(11_999)).isTrue();
        assertThat(p.projectedToExceed(12_000)).isFalse();
        OverageTariff tariff = OverageTariff.of(Tier.of(1000, "0.05"), Tier.unbounded("0.01"));
        assertThat(p.projectedOverageCost(tariff, 10_000)).isEqualByComparingTo("60");
    }

    @Test
    void projectionsRoundUp() {
        // 1 of 30 days: 7 used -> 210; 7 used after 7 days -> 30
        assertThat(UsageProjection.linear(utc, Instant.parse("2026-11-08T00:00:00Z"), 7)
                        .projected())
                .isEqualTo(30);
        assertThat(UsageProjection.linear(utc, Instant.parse("2026-11-03T00:00:00Z"), 1)
                        .projected())
                .isEqualTo(15);
        assertThat(UsageProjection.linear(utc, Instant.parse("2026-11-04T00:00:00Z"), 1)
                        .projected())
                .isEqualTo(10);
        assertThat(UsageProjection.linear(utc, Instant.parse("2026-11-08T00:00:00Z"), 1)
                        .projected())
                .isEqualTo(5); // 30/7 = 4.29 -> 5
    }

    @Test
    void theFirstHoursAreCountedAsAtLeastMinElapsed() {
        // 100 used in the first minute: with a 1-day floor, 30 x 100, not 43200 x 100
        UsageProjection p = UsageProjection.linear(utc, Instant.parse("2026-11-01T00:01:00Z"), 100);

        assertThat(p.projected()).isEqualTo(3000);
        assertThat(UsageProjection.linear(utc, Instant.parse("2026-11-01T00:01:00Z"), 100, Duration.ofMinutes(1))
                        .projected())
                .isEqualTo(100L * 30 * 24 * 60);
    }

    @Test
    void atTheVeryStartNothingUsedProjectsNothing() {
        UsageProjection p = UsageProjection.linear(utc, Instant.parse("2026-11-01T00:00:00Z"), 0);

        assertThat(p.projected()).isZero();
    }

    @Test
    void aMeasuredRateIsAddedOverTheRestOfTheMonth() {
        // 2 hours before the end, 10 commands per hour
        UsageProjection p = UsageProjection.atRate(utc, Instant.parse("2026-11-30T22:00:00Z"), 500, 10.0);

        assertThat(p.projected()).isEqualTo(520);
        assertThat(UsageProjection.atRate(utc, Instant.parse("2026-11-30T22:00:00Z"), 500, 0)
                        .projected())
                .isEqualTo(500);
    }

    @Test
    void badInputIsRejected() {
        Instant now = Instant.parse("2026-11-11T00:00:00Z");
        assertThatThrownBy(() -> UsageProjection.linear(utc, now, -1)).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> UsageProjection.linear(utc, now, 1, Duration.ZERO))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> UsageProjection.atRate(utc, now, 1, Double.NaN))
                .isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> UsageProjection.atRate(utc, now, 1, -1)).isInstanceOf(PidPoolException.class);
    }
}
