package io.pidpool.core.allocation;

/** Why a {@link PlanStep.Delete} withdraws a PID from an instance. */
public enum DeleteReason {
    /** The module no longer wants the PID: deleted, disabled, in cooldown or migrated away. */
    UNWANTED,
    /** Another instance of the module holds the same PID (a corruption); it keeps it. */
    DUPLICATE,
    /** The PID moves to an instance below its target (a join, a scale-out, a re-split). */
    REBALANCE;

    /** Whether the delete is the first half of a move, i.e. counts against the throttle. */
    public boolean isMove() {
        return this == REBALANCE;
    }
}
