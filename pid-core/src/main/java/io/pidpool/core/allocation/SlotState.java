package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.ModuleConfig;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * One of a module's {@link ModuleConfig#servers()} pre-split slots, as the planner left it.
 *
 * @param holder the instance bound to the slot, or {@code null} when the slot is vacant
 * @param lastHolder the instance that held the slot before its current holder or vacancy, or
 *     {@code null} if it was never held; while that instance is in the snapshot as departed, its
 *     PIDs are attributed to the slot
 * @param vacantSinceNanos when the slot became vacant (meaningful only while vacant)
 * @param weight the weight of the slot's (last) holder, 1 for a slot never held
 * @param reserved PIDs set aside for the slot and not yet written to a holder: a vacant slot's
 *     share, or PIDs a bound slot is waiting for
 */
public record SlotState(
        InstanceRef holder, InstanceRef lastHolder, long vacantSinceNanos, int weight, Set<String> reserved) {
    public SlotState {
        requireArgument(
                weight >= 1 && weight <= ModuleConfig.MAX_WEIGHT, "weight", "slot weight must be >= 1, was %d", weight);
        reserved = reserved == null || reserved.isEmpty()
                ? Set.of()
                : Collections.unmodifiableSet(new LinkedHashSet<>(reserved));
    }

    public boolean isVacant() {
        return holder == null;
    }
}
