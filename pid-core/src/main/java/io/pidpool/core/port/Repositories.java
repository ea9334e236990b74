package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireNonNull;

/**
 * The repositories of one store, sharing one {@link Transactor}: calls made inside
 * {@code transactor().inTransaction(...)} on any of them commit together. {@code fence} is the
 * store's leader epoch: a leader's unit of work checks it first ({@link LeaderFence#check}).
 */
public record Repositories(
        Transactor transactor,
        ModuleRepository modules,
        PidRepository pids,
        AssignmentRepository assignments,
        SlotRepository slots,
        OperationLog operations,
        AuditLog audit,
        UsageLedger usage,
        LeaderFence fence) {
    public Repositories {
        requireNonNull(transactor, "transactor");
        requireNonNull(modules, "modules");
        requireNonNull(pids, "pids");
        requireNonNull(assignments, "assignments");
        requireNonNull(slots, "slots");
        requireNonNull(operations, "operations");
        requireNonNull(audit, "audit");
        requireNonNull(usage, "usage");
        requireNonNull(fence, "fence");
    }
}
