package io.pidpool.core.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.quota.OverageTariff.Tier;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

class OverageTariffProperties {
    @Provide
    Arbitrary<OverageTariff> tariffs() {
        Arbitrary<BigDecimal> price = Arbitraries.bigDecimals()
                .between(BigDecimal.ZERO, new BigDecimal("5"))
                .ofScale(4);
        Arbitrary<Tier> bounded =
                Combinators.combine(Arbitraries.longs().between(1, 500), price).as(Tier::new);
        return Combinators.combine(bounded.list().ofMaxSize(4), price).as((tiers, last) -> {
            List<Tier> all = new ArrayList<>(tiers);
            all.add(new Tier(Tier.UNBOUNDED, last));
            return OverageTariff.of(all);
        });
    }

    @Property(tries = 1000)
    void costIsMonotoneNonDecreasingInUsage(
            @ForAll("tariffs") OverageTariff tariff,
            @ForAll @LongRange(min = 0, max = 1_000_000_000) long used,
            @ForAll @LongRange(min = 0, max = 5_000) long more,
            @ForAll @LongRange(min = 0, max = 1_000_000) long quota) {
        assertThat(tariff.overageCost(used + more, quota)).isGreaterThanOrEqualTo(tariff.overageCost(used, quota));
        assertThat(tariff.overageCost(used, quota).signum()).isNotNegative();
    }

    @Property(tries = 1000)
    void costIsTheSumOfEachCommandsMarginalPrice(
            @ForAll("tariffs") OverageTariff tariff, @ForAll @LongRange(min = 0, max = 2_500) long overage) {
        BigDecimal naive = BigDecimal.ZERO;
        for (long i = 0; i < overage; i++) {
            naive = naive.add(tariff.marginalPrice(i));
        }

        assertThat(tariff.costOf(overage)).isEqualByComparingTo(naive);
    }

    @Property(tries = 1000)
    void usageWithinQuotaIsFree(
            @ForAll("tariffs") OverageTariff tariff,
            @ForAll @LongRange(min = 0, max = 1_000_000) long quota,
            @ForAll @LongRange(min = 0, max = 1_000_000) long used) {
        assertThat(tariff.overageCost(Math.min(used, quota), quota)).isEqualByComparingTo("0");
    }
}
