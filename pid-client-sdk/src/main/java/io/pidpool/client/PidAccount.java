package io.pidpool.client;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import java.util.Map;

/**
 * A PID (third-party account) as the SDK hands it to a {@link PidListener}: its id, the decrypted
 * password, its monthly command quota, the overage the operator allows on top, and free-form
 * attributes (e.g. the platform's endpoint).
 *
 * <p>{@link #toString()} never prints the secret, so an account may be logged as it is. Instances are
 * immutable and safe to share between threads.
 *
 * @param id the PID, unique in the cluster
 * @param secret the account's password in clear text; keep it out of logs
 * @param monthlyQuota commands the PID may use per month before overage billing starts
 * @param overageAllowance commands the operator allows beyond {@code monthlyQuota}
 * @param attributes free-form key/value pairs set by the operator (never {@code null})
 */
public record PidAccount(
        String id, String secret, long monthlyQuota, long overageAllowance, Map<String, String> attributes) {

    public PidAccount {
        Names.requirePidId(id, "pid.id");
        requireNonNull(secret, "pid.secret");
        requireArgument(monthlyQuota >= 0, "pid.monthlyQuota", "monthlyQuota must be >= 0, was %d", monthlyQuota);
        requireArgument(
                overageAllowance >= 0,
                "pid.overageAllowance",
                "overageAllowance must be >= 0, was %d",
                overageAllowance);
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }

    /** Everything but the secret. */
    @Override
    public String toString() {
        return "PidAccount[id=" + id + ", monthlyQuota=" + monthlyQuota + ", overageAllowance=" + overageAllowance
                + ", attributes=" + attributes + ", secret=***]";
    }
}
