package io.pidpool.core.advice;

import io.pidpool.core.quota.OverageTariff;
import java.math.BigDecimal;
import java.util.Arrays;

/**
 * The arithmetic of the projection model: a module's future demand poured over its ACTIVE PIDs
 * "most remaining quota first" (see {@code docs/advice.md}).
 *
 * <p>A PID is reduced to its <em>position</em> {@code x = used - monthlyQuota} (negative: quota
 * left; positive: overage so far). Sending each command to the PID with the lowest position raises
 * the lowest positions to a common level: with integer commands, the largest level {@code W} with
 * {@code g(W) = sum over x < W of (W - x) <= demand}; every PID at or below {@code W} ends at {@code
 * W}, {@code L = demand - g(W)} of them at {@code W + 1}; PIDs above {@code W} keep their position.
 * A PID's overage is {@code max(0, x')}, priced per PID by the tariff.
 *
 * <p>The positions are held as a sorted {@link Multiset} with prefix sums and suffix costs, so a
 * fill costs {@code O(log(range) * log n)} and a fill of the same multiset with a few PIDs added or
 * removed (what the {@link Recommender} asks) costs the same, plus the few. Package-private;
 * immutable.
 */
final class WaterFill {
    private WaterFill() {}

    /**
     * The result of a fill.
     *
     * @param pids how many PIDs the demand was poured over
     * @param level {@code W}
     * @param atLevel how many PIDs end at {@code W} or {@code W + 1} (those at or below {@code W})
     * @param raised how many of those end at {@code W + 1} ({@code L})
     * @param overage commands above quota at month end, summed over the PIDs (with no PID: the demand)
     * @param cost the tariff's price of that overage, per PID (with no PID: of the demand as one PID's)
     */
    record Fill(long pids, long level, long atLevel, long raised, long overage, BigDecimal cost) {
        /** The final position of a PID at position {@code x}, the {@code rank}-th (0-based) at or below the level. */
        long finalPosition(long x, long rank) {
            return x > level ? x : (rank < raised ? level + 1 : level);
        }
    }

    /** A sorted multiset of positions with prefix sums, and suffix sums of overage and its price. */
    static final class Multiset {
        private final long[] xs;
        private final long[] prefix;
        private final long[] suffixOverage;
        private final BigDecimal[] suffixCost;

        private Multiset(long[] sorted, OverageTariff tariff) {
            int n = sorted.length;
            this.xs = sorted;
            this.prefix = new long[n + 1];
            for (int i = 0; i < n; i++) {
                prefix[i + 1] = prefix[i] + sorted[i];
            }
            this.suffixOverage = new long[n + 1];
            this.suffixCost = new BigDecimal[n + 1];
            suffixCost[n] = BigDecimal.ZERO;
            BigDecimal lastCost = BigDecimal.ZERO;
            long lastX = 0;
            for (int i = n - 1; i >= 0; i--) {
                long x = sorted[i];
                if (x > 0) {
                    if (x != lastX) {
                        lastCost = tariff.costOf(x);
                        lastX = x;
                    }
                    suffixOverage[i] = suffixOverage[i + 1] + x;
                    suffixCost[i] = suffixCost[i + 1].add(lastCost);
                } else {
                    suffixOverage[i] = suffixOverage[i + 1];
                    suffixCost[i] = suffixCost[i + 1];
                }
            }
        }

        static Multiset empty(OverageTariff tariff) {
            return new Multiset(new long[0], tariff);
        }

        /** Takes ownership of {@code positions} and sorts it. */
        static Multiset of(long[] positions, OverageTariff tariff) {
            Arrays.sort(positions);
            return new Multiset(positions, tariff);
        }

        /** This multiset plus {@code x}: {@code O(size)}, meant for the few PIDs a recommendation moves. */
        Multiset with(long x, OverageTariff tariff) {
            long[] copy = Arrays.copyOf(xs, xs.length + 1);
            copy[xs.length] = x;
            return of(copy, tariff);
        }

        int size() {
            return xs.length;
        }

        long min() {
            return xs[0];
        }

        long max() {
            return xs[xs.length - 1];
        }

        long get(int i) {
            return xs[i];
        }

        /** The first index whose value is {@code >= w}. */
        int lowerBound(long w) {
            int lo = 0;
            int hi = xs.length;
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (xs[mid] < w) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }

        /** The first index whose value is {@code > w}. */
        int upperBound(long w) {
            return w == Long.MAX_VALUE ? xs.length : lowerBound(w + 1);
        }

        long countBelow(long w) {
            return lowerBound(w);
        }

        long sumBelow(long w) {
            return prefix[lowerBound(w)];
        }

        long overageAbove(long w) {
            return suffixOverage[upperBound(w)];
        }

        BigDecimal costAbove(long w) {
            return suffixCost[upperBound(w)];
        }

        long sum() {
            return prefix[xs.length];
        }
    }

    /**
     * Pours {@code demand} over {@code base} plus {@code added} minus {@code removed} (each value of
     * {@code removed} must be in {@code base}), plus {@code extra} when {@code extraSign} is 1 or
     * minus it when -1 (0: no extra).
     */
    static Fill fill(
            OverageTariff tariff,
            long demand,
            Multiset base,
            Multiset added,
            Multiset removed,
            long extra,
            int extraSign) {
        long n = (long) base.size() + added.size() - removed.size() + extraSign;
        if (n == 0) {
            // No PID to pour into: priced as one account with nothing left (docs/advice.md).
            return new Fill(0, 0, 0, 0, demand, demand == 0 ? BigDecimal.ZERO : tariff.costOf(demand));
        }
        long lo = Long.MAX_VALUE;
        long hi = Long.MIN_VALUE;
        if (base.size() > 0) {
            lo = base.min();
            hi = base.max();
        }
        if (added.size() > 0) {
            lo = Math.min(lo, added.min());
            hi = Math.max(hi, added.max());
        }
        if (extraSign > 0) {
            lo = Math.min(lo, extra);
            hi = Math.max(hi, extra);
        }
        // g(lo) = 0 <= demand; g(hi) >= n * (demand / n + 1) > demand.
        hi = hi + demand / n + 1;
        while (lo < hi) {
            long mid = lo + (hi - lo + 1) / 2;
            if (poured(mid, base, added, removed, extra, extraSign) <= demand) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        long level = lo;
        long atLevel = countBelow(level + 1, base, added, removed, extra, extraSign);
        long raised = demand - poured(level, base, added, removed, extra, extraSign);

        long overageAbove = base.overageAbove(level) + added.overageAbove(level) - removed.overageAbove(level);
        BigDecimal costAbove = base.costAbove(level).add(added.costAbove(level)).subtract(removed.costAbove(level));
        if (extraSign != 0 && extra > level && extra > 0) {
            overageAbove += extraSign * extra;
            BigDecimal extraCost = tariff.costOf(extra);
            costAbove = extraSign > 0 ? costAbove.add(extraCost) : costAbove.subtract(extraCost);
        }
        long low = Math.max(0, level);
        long high = Math.max(0, level + 1);
        long overage = low * (atLevel - raised) + high * raised + overageAbove;
        BigDecimal cost = costAbove;
        if (high > 0) {
            if (atLevel - raised > 0 && low > 0) {
                cost = cost.add(tariff.costOf(low).multiply(BigDecimal.valueOf(atLevel - raised)));
            }
            if (raised > 0) {
                cost = cost.add(tariff.costOf(high).multiply(BigDecimal.valueOf(raised)));
            }
        }
        return new Fill(n, level, atLevel, raised, overage, cost);
    }

    private static long countBelow(long w, Multiset base, Multiset added, Multiset removed, long extra, int sign) {
        long count = base.countBelow(w) + added.countBelow(w) - removed.countBelow(w);
        return extra < w ? count + sign : count;
    }

    /**
     * {@code g(w)}: commands needed to raise every position below {@code w} to {@code w}. The product
     * may wrap, but the true result fits in a long for every {@code w} the search probes (positions
     * and PID counts are bounded by {@link PidUsage#MAX_USED} and {@link UsageSnapshot#MAX_PIDS}), and
     * two's-complement arithmetic then gives it exactly.
     */
    private static long poured(long w, Multiset base, Multiset added, Multiset removed, long extra, int sign) {
        long count = base.countBelow(w) + added.countBelow(w) - removed.countBelow(w);
        long sum = base.sumBelow(w) + added.sumBelow(w) - removed.sumBelow(w);
        if (extra < w) {
            count += sign;
            sum += sign * extra;
        }
        return count * w - sum;
    }
}
