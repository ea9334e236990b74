package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.Map;

/**
 * An account as an operator submits it, before it is sealed and stored. {@code secret} is the plain
 * password: it is never logged ({@link #toString()} hides it) and is sealed before it leaves the
 * server that received it. It is {@code null} only in an UPDATE that keeps the stored password
 * ({@link Operation.Add} requires one).
 */
public record PidSpec(
        String id, String secret, long monthlyQuota, long overageAllowance, Map<String, String> attributes) {
    public static final int MAX_SECRET_LENGTH = 1024;

    public PidSpec {
        Names.requirePidId(id, "pids.id");
        requireArgument(
                secret == null || (!secret.isEmpty() && secret.length() <= MAX_SECRET_LENGTH),
                "pids.secret",
                "secret of %s must be 1..%d characters",
                id,
                MAX_SECRET_LENGTH);
        requireQuotas(id, monthlyQuota, overageAllowance);
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }

    /** The bounds of an account's quotas, checked here and in its sealed form. */
    public static void requireQuotas(String id, long monthlyQuota, long overageAllowance) {
        requireArgument(
                monthlyQuota >= 0 && monthlyQuota <= PidRecord.MAX_MONTHLY_QUOTA,
                "pids.monthlyQuota",
                "monthlyQuota of %s must be within 0..%d, was %d",
                id,
                PidRecord.MAX_MONTHLY_QUOTA,
                monthlyQuota);
        requireArgument(
                overageAllowance >= 0 && overageAllowance <= PidRecord.MAX_MONTHLY_QUOTA,
                "pids.overageAllowance",
                "overageAllowance of %s must be within 0..%d, was %d",
                id,
                PidRecord.MAX_MONTHLY_QUOTA,
                overageAllowance);
    }

    @Override
    public String toString() {
        return "PidSpec[id=" + id + ", monthlyQuota=" + monthlyQuota + ", overageAllowance=" + overageAllowance
                + ", secret=***]";
    }
}
