package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The planner's memory of one module.
 *
 * @param servers the configured server count the last plan saw (0 before the first plan); a drop
 *     tells an operator's shrink apart from a departure
 * @param slots the module's slots in index order: the configured ones, then extra slots of a
 *     scale-out (more instances than servers) that are still held or reserved
 * @param recentDepartures instances that vanished within the brake window, with the time they did
 */
public record ModuleState(int servers, List<SlotState> slots, Map<InstanceRef, Long> recentDepartures) {
    public static final ModuleState EMPTY = new ModuleState(0, List.of(), Map.of());

    public ModuleState {
        slots = List.copyOf(requireNonNull(slots, "slots"));
        recentDepartures =
                Collections.unmodifiableMap(new TreeMap<>(requireNonNull(recentDepartures, "recentDepartures")));
    }

    public int vacantSlots() {
        return (int) slots.stream().filter(SlotState::isVacant).count();
    }
}
