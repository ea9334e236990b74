package io.pidpool.core.allocation;

import java.util.Set;

/**
 * A slot of a module while one plan works on it: its holder (null: vacant), the holder before, since
 * when it is vacant, its weight and the PIDs it kept back last time. Mutable; used by one plan and
 * dropped with it ({@link SlotState} is what outlives the plan).
 */
final class WorkSlot {
    InstanceRef holder;
    InstanceRef lastHolder;
    long vacantSince;
    int weight;
    final Set<String> previouslyReserved;
    int index;
    /** Its unit of the balance, once the plan made one (a bound slot, or a vacancy that waits). */
    BalanceUnit unit;

    WorkSlot(SlotState state) {
        holder = state.holder();
        lastHolder = state.lastHolder();
        vacantSince = state.vacantSinceNanos();
        weight = state.weight();
        previouslyReserved = state.reserved();
    }

    WorkSlot(long now) {
        vacantSince = now;
        weight = 1;
        previouslyReserved = Set.of();
    }
}
