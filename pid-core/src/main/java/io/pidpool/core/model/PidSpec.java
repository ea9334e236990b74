package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * An account as an ADD or UPDATE describes it. {@code secret} is the password in the form {@code
 * S} of its {@link Operation}: plain text ({@code String}, 1..{@link #MAX_SECRET_LENGTH} characters)
 * as an operator submits it, sealed once the server that received it stores it. Either way it is
 * never logged ({@link #toString()} hides it). It is {@code null} only in an UPDATE that keeps the
 * stored password ({@link Operation.Add} requires one).
 */
public record PidSpec<S>(
        String id, S secret, long monthlyQuota, long overageAllowance, Map<String, String> attributes) {
    public static final int MAX_SECRET_LENGTH = 1024;

    public PidSpec {
        Names.requirePidId(id, "pids.id");
        if (secret instanceof String text) {
            requireArgument(
                    !text.isEmpty() && text.length() <= MAX_SECRET_LENGTH,
                    "pids.secret",
                    "secret of %s must be 1..%d characters",
                    id,
                    MAX_SECRET_LENGTH);
        }
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
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }

    /** This spec with its secret (if any) passed through {@code convert}; the plain text goes no further. */
    public <T> PidSpec<T> withSecret(Function<? super S, ? extends T> convert) {
        return new PidSpec<>(
                id, secret == null ? null : convert.apply(secret), monthlyQuota, overageAllowance, attributes);
    }

    static <S, T> List<PidSpec<T>> withSecrets(List<PidSpec<S>> specs, Function<? super S, ? extends T> convert) {
        return specs.stream().map(spec -> spec.<T>withSecret(convert)).toList();
    }

    @Override
    public String toString() {
        return "PidSpec[id=" + id + ", monthlyQuota=" + monthlyQuota + ", overageAllowance=" + overageAllowance
                + ", secret=***]";
    }
}
