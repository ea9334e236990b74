package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.OverageTariff.Tier;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

class OverageTariffTest {
    // first 1000 over quota at 0.05, next 9000 at 0.03, the rest at 0.01
    private final OverageTariff tariff =
            OverageTariff.of(Tier.of(1000, "0.05"), Tier.of(9000, "0.03"), Tier.unbounded("0.01"));

    @Test
    void usageWithinQuotaCostsNothing() {
        assertThat(tariff.overageCost(0, 10_000)).isEqualByComparingTo("0");
        assertThat(tariff.overageCost(10_000, 10_000)).isEqualByComparingTo("0");
    }

    @Test
    void eachTierIsPricedInTurn() {
        assertThat(tariff.costOf(1)).isEqualByComparingTo("0.05");
        assertThat(tariff.costOf(1000)).isEqualByComparingTo("50");
        assertThat(tariff.costOf(1001)).isEqualByComparingTo("50.03");
        assertThat(tariff.costOf(10_000)).isEqualByComparingTo("320");
        assertThat(tariff.costOf(10_500)).isEqualByComparingTo("325");
        assertThat(tariff.overageCost(12_345, 10_000)).isEqualByComparingTo("90.35");
    }

    @Test
    void costsAreExactDecimals() {
        OverageTariff fine = OverageTariff.of(Tier.unbounded("0.0035"));

        assertThat(fine.costOf(3)).isEqualTo(new BigDecimal("0.0105"));
        assertThat(fine.costOf(1_000_000_000L)).isEqualByComparingTo("3500000");
    }

    @Test
    void theMarginalPriceFollowsTheTiers() {
        assertThat(tariff.marginalPrice(0)).isEqualByComparingTo("0.05");
        assertThat(tariff.marginalPrice(999)).isEqualByComparingTo("0.05");
        assertThat(tariff.marginalPrice(1000)).isEqualByComparingTo("0.03");
        assertThat(tariff.marginalPrice(9_999)).isEqualByComparingTo("0.03");
        assertThat(tariff.marginalPrice(10_000)).isEqualByComparingTo("0.01");
        assertThat(OverageTariff.free().costOf(123)).isEqualByComparingTo("0");
    }

    @Test
    void malformedTariffsAreRejectedWithTheirField() {
        assertFieldError(() -> OverageTariff.of(Tier.of(10, "0.1")), "tiers");
        assertFieldError(() -> OverageTariff.of(Tier.unbounded("0.1"), Tier.unbounded("0.1")), "tiers");
        assertFieldError(() -> OverageTariff.of(java.util.List.of()), "tiers");
        assertFieldError(() -> Tier.of(0, "0.1"), "tier.size");
        assertFieldError(() -> Tier.of(5, "-0.1"), "tier.unitPrice");
        assertFieldError(() -> Tier.of(5, "abc"), "tier.unitPrice");
        assertFieldError(() -> tariff.costOf(-1), "overage");
        assertFieldError(() -> tariff.overageCost(-1, 0), "used");
    }

    private static void assertFieldError(Runnable r, String field) {
        assertThatThrownBy(r::run)
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo(field));
    }
}
