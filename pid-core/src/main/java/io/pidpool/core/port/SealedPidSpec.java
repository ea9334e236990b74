package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import java.util.Map;
import java.util.function.Function;

/**
 * A {@link PidSpec} after its password was sealed by the server that accepted it: the form in which
 * an ADD or UPDATE waits in the {@link OperationLog} for the leader. It never holds a plain password.
 * {@code secret} is {@code null} in an UPDATE that keeps the account's password (an ADD always has
 * one: {@link SealedOperation.Add}).
 */
public record SealedPidSpec(
        String id, SealedSecret secret, long monthlyQuota, long overageAllowance, Map<String, String> attributes) {
    public SealedPidSpec {
        Names.requirePidId(id, "pids.id");
        if (secret != null) {
            StorageLimits.requireSecret(secret, "pids.secret");
        }
        PidSpec.requireQuotas(id, monthlyQuota, overageAllowance);
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
        StorageLimits.requireAttributes(attributes, "pids.attributes");
    }

    /** Seals {@code spec}'s password with {@code sealer}; the plain text goes no further. */
    public static SealedPidSpec seal(PidSpec spec, Function<String, SealedSecret> sealer) {
        return new SealedPidSpec(
                spec.id(),
                spec.secret() == null ? null : sealer.apply(spec.secret()),
                spec.monthlyQuota(),
                spec.overageAllowance(),
                spec.attributes());
    }

    /** The new, active account this spec describes in {@code module}. */
    public PidRecord toAccount(ModuleKey module) {
        requireNonNull(secret, "pids.secret");
        return new PidRecord(id, module, monthlyQuota, overageAllowance, PidAvailability.ACTIVE, secret, attributes);
    }

    /**
     * {@code existing} with this spec's secret (when it has one; else the existing one), quotas and
     * attributes; module and status stay.
     */
    public PidRecord applyTo(PidRecord existing) {
        requireArgument(existing.id().equals(id), "pids.id", "spec %s cannot update PID %s", id, existing.id());
        return new PidRecord(
                id,
                existing.module(),
                monthlyQuota,
                overageAllowance,
                existing.status(),
                secret == null ? existing.secret() : secret,
                attributes);
    }
}
