package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.Map;

/**
 * A third-party account as PidPool stores it: which module it serves, its monthly command quota,
 * the overage the operator allows on top, its status and its sealed password.
 *
 * @param overageAllowance commands the operator allows beyond {@code monthlyQuota} (billed in tiers)
 */
public record PidRecord(
        String id,
        ModuleKey module,
        long monthlyQuota,
        long overageAllowance,
        PidAvailability status,
        SealedSecret secret,
        Map<String, String> attributes) {

    /** Above this a quota is taken for a typo, not a contract. */
    public static final long MAX_MONTHLY_QUOTA = 1_000_000_000L;

    public PidRecord {
        Names.requirePidId(id, "pid.id");
        requireNonNull(module, "pid.module");
        requireArgument(
                monthlyQuota >= 0 && monthlyQuota <= MAX_MONTHLY_QUOTA,
                "pid.monthlyQuota",
                "monthlyQuota must be within 0..%d, was %d",
                MAX_MONTHLY_QUOTA,
                monthlyQuota);
        requireArgument(
                overageAllowance >= 0 && overageAllowance <= MAX_MONTHLY_QUOTA,
                "pid.overageAllowance",
                "overageAllowance must be within 0..%d, was %d",
                MAX_MONTHLY_QUOTA,
                overageAllowance);
        requireNonNull(status, "pid.status");
        requireNonNull(secret, "pid.secret");
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }

    /** Commands this PID may use in a month, overage allowance included. */
    public long hardLimit() {
        return monthlyQuota + overageAllowance;
    }

    /** The new, active account an ADD's {@code spec} describes in {@code module}. */
    public static PidRecord added(PidSpec<SealedSecret> spec, ModuleKey module) {
        requireNonNull(spec.secret(), "pids.secret");
        return new PidRecord(
                spec.id(),
                module,
                spec.monthlyQuota(),
                spec.overageAllowance(),
                PidAvailability.ACTIVE,
                spec.secret(),
                spec.attributes());
    }

    /**
     * This account with an UPDATE's {@code spec} applied: its secret (when it has one; else this
     * one), quotas and attributes. Module and status stay.
     */
    public PidRecord updatedBy(PidSpec<SealedSecret> spec) {
        requireArgument(spec.id().equals(id), "pids.id", "spec %s cannot update PID %s", spec.id(), id);
        return new PidRecord(
                id,
                module,
                spec.monthlyQuota(),
                spec.overageAllowance(),
                status,
                spec.secret() == null ? secret : spec.secret(),
                spec.attributes());
    }

    public PidRecord withModule(ModuleKey newModule) {
        return new PidRecord(id, newModule, monthlyQuota, overageAllowance, status, secret, attributes);
    }

    public PidRecord withStatus(PidAvailability newStatus) {
        return new PidRecord(id, module, monthlyQuota, overageAllowance, newStatus, secret, attributes);
    }
}
