package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class MonthlyWindowTest {
    private final MonthlyWindow shanghai = new MonthlyWindow(ZoneId.of("Asia/Shanghai"));

    @Test
    void theMonthIsTheCalendarMonthInTheConfiguredZone() {
        // 2026-11-30T17:00Z is already 2026-12-01 01:00 in Shanghai
        Instant t = Instant.parse("2026-11-30T17:00:00Z");

        assertThat(shanghai.monthOf(t).key()).isEqualTo("2026-12");
        assertThat(new MonthlyWindow(ZoneOffset.UTC).monthOf(t).key()).isEqualTo("2026-11");
    }

    @Test
    void theQuotaResetsAtLocalMidnightOfTheFirst() {
        QuotaMonth nov = QuotaMonth.parse("2026-11");

        assertThat(shanghai.start(nov)).isEqualTo(Instant.parse("2026-10-31T16:00:00Z"));
        assertThat(shanghai.end(nov)).isEqualTo(Instant.parse("2026-11-30T16:00:00Z"));
        assertThat(shanghai.length(nov)).isEqualTo(Duration.ofDays(30));
        assertThat(shanghai.nextReset(Instant.parse("2026-11-15T00:00:00Z")))
                .isEqualTo(Instant.parse("2026-11-30T16:00:00Z"));
        assertThat(shanghai.monthOf(shanghai.end(nov).minusNanos(1))).isEqualTo(nov);
        assertThat(shanghai.monthOf(shanghai.end(nov))).isEqualTo(nov.next());
    }

    @Test
    void daylightSavingMonthsAreAnHourShorterOrLonger() {
        MonthlyWindow berlin = new MonthlyWindow(ZoneId.of("Europe/Berlin"));

        assertThat(berlin.length(QuotaMonth.parse("2026-03")))
                .isEqualTo(Duration.ofDays(31).minusHours(1));
        assertThat(berlin.length(QuotaMonth.parse("2026-10")))
                .isEqualTo(Duration.ofDays(31).plusHours(1));
    }

    @Test
    void theCurrentMonthComesFromTheClock() {
        ManualClock clock = ManualClock.at("2027-02-28T23:59:59Z");
        MonthlyWindow utc = new MonthlyWindow(ZoneOffset.UTC);

        assertThat(utc.current(clock).key()).isEqualTo("2027-02");
        clock.advance(Duration.ofSeconds(1));
        assertThat(utc.current(clock).key()).isEqualTo("2027-03");
        assertThat(utc.elapsed(clock.instant())).isZero();
    }

    @Test
    void monthKeysParseStrictly() {
        assertThat(QuotaMonth.parse("2026-11")).isEqualTo(QuotaMonth.of(2026, 11));
        assertThat(QuotaMonth.parse("2026-12").next()).isEqualTo(QuotaMonth.parse("2027-01"));
        assertThat(QuotaMonth.parse("2026-01").previous().key()).isEqualTo("2025-12");
        assertThat(QuotaMonth.parse("2026-01")).isLessThan(QuotaMonth.parse("2026-02"));
        for (String bad : new String[] {null, "", "2026-13", "2026-1", "26-11", "2026/11", "1999-12", "2026-11-01"}) {
            assertThatThrownBy(() -> QuotaMonth.parse(bad))
                    .as("'%s'", bad)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("month"));
        }
        assertThatThrownBy(() -> QuotaMonth.of(2026, 0)).isInstanceOf(PidPoolException.class);
    }
}
