package io.pidpool.core.advice;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.quota.OverageTariff;
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
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The closed-form fill against the policy it models, simulated one command at a time: each command
 * goes to the PID with the most quota left (lowest position), and each PID's overage is priced on
 * its own.
 */
class WaterFillProperties {
    @Provide
    Arbitrary<OverageTariff> tariffs() {
        Arbitrary<BigDecimal> price = Arbitraries.bigDecimals()
                .between(BigDecimal.ZERO, new BigDecimal("3"))
                .ofScale(2);
        Arbitrary<Tier> bounded =
                Combinators.combine(Arbitraries.longs().between(1, 60), price).as(Tier::new);
        return Combinators.combine(bounded.list().ofMaxSize(3), price).as((tiers, last) -> {
            List<Tier> all = new ArrayList<>(tiers);
            all.add(new Tier(Tier.UNBOUNDED, last));
            return OverageTariff.of(all);
        });
    }

    @Provide
    Arbitrary<List<Long>> positions() {
        return Arbitraries.longs().between(-150, 150).list().ofMaxSize(7);
    }

    @Property(tries = 1000)
    void fillMatchesCommandByCommandSimulation(
            @ForAll("tariffs") OverageTariff tariff,
            @ForAll("positions") List<Long> positions,
            @ForAll @IntRange(min = 0, max = 600) int demand) {
        WaterFill.Fill fill = WaterFill.fill(
                tariff,
                demand,
                multiset(positions, tariff),
                WaterFill.Multiset.empty(tariff),
                WaterFill.Multiset.empty(tariff),
                0,
                0);

        Simulated expected = simulate(tariff, positions, demand);
        assertThat(fill.cost()).isEqualByComparingTo(expected.cost);
        assertThat(fill.overage()).isEqualTo(expected.overage);
        assertThat(fill.pids()).isEqualTo(positions.size());
    }

    @Property(tries = 1000)
    void changesGiveTheSameFillAsTheChangedMultisetBuiltAfresh(
            @ForAll("tariffs") OverageTariff tariff,
            @ForAll("positions") List<Long> base,
            @ForAll("positions") List<Long> added,
            @ForAll @Size(max = 7) List<@IntRange(min = 0, max = 6) Integer> removedIndices,
            @ForAll @IntRange(min = -150, max = 150) int extra,
            @ForAll @IntRange(min = -1, max = 1) int extraSign,
            @ForAll @IntRange(min = 0, max = 600) int demand) {
        List<Long> removed = new ArrayList<>();
        List<Long> left = new ArrayList<>(base);
        for (int i : removedIndices) {
            if (i < left.size()) {
                removed.add(left.remove(i));
            }
        }
        int sign = extraSign;
        if (sign < 0 && left.isEmpty()) {
            sign = 0;
        }
        List<Long> result = new ArrayList<>(left);
        result.addAll(added);
        long extraValue = extra;
        if (sign > 0) {
            result.add(extraValue);
        } else if (sign < 0) {
            extraValue = left.get(Math.floorMod(extra, left.size()));
            result.remove(Long.valueOf(extraValue));
        }

        WaterFill.Fill changed = WaterFill.fill(
                tariff,
                demand,
                multiset(base, tariff),
                multiset(added, tariff),
                multiset(removed, tariff),
                extraValue,
                sign);
        WaterFill.Fill fresh = WaterFill.fill(
                tariff,
                demand,
                multiset(result, tariff),
                WaterFill.Multiset.empty(tariff),
                WaterFill.Multiset.empty(tariff),
                0,
                0);

        assertThat(changed.cost()).isEqualByComparingTo(fresh.cost());
        assertThat(changed.overage()).isEqualTo(fresh.overage());
        assertThat(changed.level()).isEqualTo(fresh.level());
        assertThat(changed.atLevel()).isEqualTo(fresh.atLevel());
        assertThat(changed.raised()).isEqualTo(fresh.raised());
    }

    static WaterFill.Multiset multiset(List<Long> values, OverageTariff tariff) {
        return WaterFill.Multiset.of(values.stream().mapToLong(Long::longValue).toArray(), tariff);
    }

    record Simulated(BigDecimal cost, long overage) {}

    static Simulated simulate(OverageTariff tariff, List<Long> positions, long demand) {
        if (positions.isEmpty()) {
            return new Simulated(tariff.costOf(demand), demand);
        }
        long[] x = positions.stream().mapToLong(Long::longValue).toArray();
        for (long c = 0; c < demand; c++) {
            int lowest = 0;
            for (int i = 1; i < x.length; i++) {
                if (x[i] < x[lowest]) {
                    lowest = i;
                }
            }
            x[lowest]++;
        }
        BigDecimal cost = BigDecimal.ZERO;
        long overage = 0;
        for (long v : x) {
            if (v > 0) {
                cost = cost.add(tariff.costOf(v));
                overage += v;
            }
        }
        return new Simulated(cost, overage);
    }
}
