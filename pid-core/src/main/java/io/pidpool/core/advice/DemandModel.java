package io.pidpool.core.advice;

import java.math.BigInteger;

/**
 * How a module's demand for the rest of the month is estimated from what it observed ({@code
 * observed}: its own usage extrapolated linearly, see {@link io.pidpool.core.quota.UsageProjection})
 * and what the operator configured ({@code configured}: {@link
 * io.pidpool.core.model.ModuleConfig#monthlyDemand()} as a rate over the rest of the month). A module
 * with {@code monthlyDemand == 0} has no configured demand: every model then uses the observation.
 */
public enum DemandModel {
    /** The observed rate only. */
    OBSERVED {
        @Override
        long combine(long observed, long configured, boolean hasConfigured, long elapsedMillis, long lengthMillis) {
            return observed;
        }
    },
    /** The configured demand only (the observation where none is configured). */
    CONFIGURED {
        @Override
        long combine(long observed, long configured, boolean hasConfigured, long elapsedMillis, long lengthMillis) {
            return hasConfigured ? configured : observed;
        }
    },
    /**
     * Weighted by how much of the month has passed: {@code ceil(f * observed + (1 - f) *
     * configured)} with {@code f = elapsed / length}. Trusts the operator's forecast on the 1st, the
     * observed rate near the end, and moves smoothly in between. The default.
     */
    BLENDED {
        @Override
        long combine(long observed, long configured, boolean hasConfigured, long elapsedMillis, long lengthMillis) {
            if (!hasConfigured) {
                return observed;
            }
            BigInteger num = BigInteger.valueOf(observed)
                    .multiply(BigInteger.valueOf(elapsedMillis))
                    .add(BigInteger.valueOf(configured).multiply(BigInteger.valueOf(lengthMillis - elapsedMillis)));
            return ceilDiv(num, lengthMillis);
        }
    };

    /**
     * The demand for the rest of the month.
     *
     * @param observed the observed rate's commands over the rest of the month
     * @param configured the configured rate's commands over the rest of the month
     * @param hasConfigured whether the module has a configured demand
     * @param elapsedMillis time since the month started, {@code 0..lengthMillis}
     * @param lengthMillis the month's length, {@code > 0}
     */
    abstract long combine(long observed, long configured, boolean hasConfigured, long elapsedMillis, long lengthMillis);

    static long ceilDiv(BigInteger num, long den) {
        BigInteger[] qr = num.divideAndRemainder(BigInteger.valueOf(den));
        BigInteger ceil = qr[1].signum() > 0 ? qr[0].add(BigInteger.ONE) : qr[0];
        return ceil.min(BigInteger.valueOf(ModuleUsage.MAX_MODULE_USAGE)).longValueExact();
    }
}
