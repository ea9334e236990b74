package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;

/**
 * One PID as the monitor sees it: where it belongs, its quota and allowance, what it used this
 * month and whether it may be handed out.
 *
 * @param used commands deducted minus refunded this month (may exceed {@code monthlyQuota} by up to
 *     the allowance, and more if the limit was lowered after the fact); at most {@link #MAX_USED}
 */
public record PidUsage(
        String id, ModuleKey module, long monthlyQuota, long overageAllowance, long used, PidAvailability status) {
    /** Twice the largest hard limit: anything above is taken for corrupt data. */
    public static final long MAX_USED = 4 * PidRecord.MAX_MONTHLY_QUOTA;

    public PidUsage {
        Names.requirePidId(id, "pids.id");
        requireNonNull(module, "pids.module");
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
        requireArgument(
                used >= 0 && used <= MAX_USED,
                "pids.used",
                "used of %s must be within 0..%d, was %d",
                id,
                MAX_USED,
                used);
        requireNonNull(status, "pids.status");
    }

    /** Quota plus overage allowance: what the ledger lets this PID use in a month. */
    public long hardLimit() {
        return monthlyQuota + overageAllowance;
    }

    /** Commands left before overage starts: {@code max(0, monthlyQuota - used)}. */
    public long remaining() {
        return Math.max(0, monthlyQuota - used);
    }

    /** {@code used - monthlyQuota}: negative while quota is left, the overage so far when positive. */
    long position() {
        return used - monthlyQuota;
    }

    /** The same PID in another module (what a MIGRATE does). */
    public PidUsage withModule(ModuleKey newModule) {
        return new PidUsage(id, newModule, monthlyQuota, overageAllowance, used, status);
    }
}
