package io.pidpool.core.quota;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.math.BigDecimal;
import java.util.List;

/**
 * The tiered price of commands beyond a PID's monthly quota: the first {@code size} commands over
 * quota cost {@code unitPrice} each, the next tier's {@code size} cost its price, and so on; the last
 * tier is unbounded, so every usage has a price.
 *
 * <p><b>Money is {@link BigDecimal}, exact.</b> Prices are non-negative decimals in the platform's
 * currency (no currency is modelled: all prices of one tariff share one). A cost is the exact sum of
 * {@code commands * unitPrice} over the tiers: no rounding happens here, so sums of costs are exact
 * too; round only for display. BigDecimal rather than long micro-units because prices like 0.0035 per
 * command need no agreed scale and costs never overflow.
 *
 * <p>Because prices are non-negative, {@link #overageCost} is monotone non-decreasing in usage.
 * Immutable and thread-safe.
 */
public final class OverageTariff {
    /** {@code size} commands at {@code unitPrice}; {@code size == UNBOUNDED} only for the last tier. */
    public record Tier(long size, BigDecimal unitPrice) {
        public static final long UNBOUNDED = Long.MAX_VALUE;

        public Tier {
            requireArgument(size > 0, "tier.size", "a tier holds at least one command, was %d", size);
            requireNonNull(unitPrice, "tier.unitPrice");
            requireArgument(unitPrice.signum() >= 0, "tier.unitPrice", "a price is never negative, was %s", unitPrice);
        }

        public static Tier of(long size, String unitPrice) {
            return new Tier(size, parsePrice(unitPrice));
        }

        public static Tier unbounded(String unitPrice) {
            return new Tier(UNBOUNDED, parsePrice(unitPrice));
        }

        public boolean isUnbounded() {
            return size == UNBOUNDED;
        }
    }

    private static final OverageTariff FREE = new OverageTariff(List.of(new Tier(Tier.UNBOUNDED, BigDecimal.ZERO)));

    private final List<Tier> tiers;

    private OverageTariff(List<Tier> tiers) {
        this.tiers = tiers;
    }

    /**
     * A tariff of these tiers, in order. Every tier but the last is bounded; the last is {@link
     * Tier#UNBOUNDED}.
     */
    public static OverageTariff of(List<Tier> tiers) {
        requireNonNull(tiers, "tiers");
        requireArgument(!tiers.isEmpty(), "tiers", "a tariff needs at least one tier");
        for (int i = 0; i < tiers.size(); i++) {
            Tier t = requireNonNull(tiers.get(i), "tiers");
            boolean last = i == tiers.size() - 1;
            requireArgument(
                    t.isUnbounded() == last,
                    "tiers",
                    last ? "the last tier must be unbounded" : "only the last tier may be unbounded (tier %d is)",
                    i + 1);
        }
        return new OverageTariff(List.copyOf(tiers));
    }

    public static OverageTariff of(Tier... tiers) {
        return of(List.of(tiers));
    }

    /** Overage is free: a price of zero for every command beyond quota. */
    public static OverageTariff free() {
        return FREE;
    }

    public List<Tier> tiers() {
        return tiers;
    }

    /** The price of {@code overage} commands beyond quota. */
    public BigDecimal costOf(long overage) {
        requireArgument(overage >= 0, "overage", "overage is never negative, was %d", overage);
        BigDecimal cost = BigDecimal.ZERO;
        long left = overage;
        for (Tier t : tiers) {
            if (left == 0) {
                break;
            }
            long inTier = Math.min(left, t.size());
            cost = cost.add(t.unitPrice().multiply(BigDecimal.valueOf(inTier)));
            left -= inTier;
        }
        return cost;
    }

    /** The overage price of a month with {@code used} commands against {@code monthlyQuota}. */
    public BigDecimal overageCost(long used, long monthlyQuota) {
        requireArgument(used >= 0, "used", "usage is never negative, was %d", used);
        requireArgument(monthlyQuota >= 0, "monthlyQuota", "quota is never negative, was %d", monthlyQuota);
        return costOf(Math.max(0, used - monthlyQuota));
    }

    /** The price of the next command after {@code overage} commands beyond quota. */
    public BigDecimal marginalPrice(long overage) {
        requireArgument(overage >= 0, "overage", "overage is never negative, was %d", overage);
        long before = 0;
        for (Tier t : tiers) {
            if (t.isUnbounded() || overage < before + t.size()) {
                return t.unitPrice();
            }
            before += t.size();
        }
        throw new AssertionError("the last tier is unbounded");
    }

    private static BigDecimal parsePrice(String price) {
        requireArgument(price != null, "tier.unitPrice", "tier.unitPrice is required");
        try {
            return new BigDecimal(price);
        } catch (NumberFormatException e) {
            throw io.pidpool.core.error.PidPoolException.invalid(
                    "tier.unitPrice", "price must be a decimal number, was '%s'", price);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof OverageTariff other && tiers.equals(other.tiers);
    }

    @Override
    public int hashCode() {
        return tiers.hashCode();
    }

    @Override
    public String toString() {
        return "OverageTariff" + tiers;
    }
}
