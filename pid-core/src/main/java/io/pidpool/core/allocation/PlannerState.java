package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.ModuleKey;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the planner carries from one plan to the next: slot bindings, vacancy times, reservations
 * and recent departures. It is a value: {@link AllocationPlanner#plan} returns the next one in
 * {@link Plan#nextState()}, and the caller passes it to the next call (Kafka's coordinator style:
 * decide, return the new state, let the caller store it).
 *
 * <p>Losing it is safe: a new leader starts from {@link #EMPTY}. Live instances are then bound to
 * slots in registration order, departed ones to the remaining slots, and every vacancy waits a
 * fresh {@link PlannerPolicy#rebalanceDelay()}; nothing a live instance holds is moved because of
 * the lost memory.
 */
public record PlannerState(Map<ModuleKey, ModuleState> modules) {
    public static final PlannerState EMPTY = new PlannerState(Map.of());

    public PlannerState {
        modules = Collections.unmodifiableMap(new TreeMap<>(requireNonNull(modules, "modules")));
    }

    /** The module's state, {@link ModuleState#EMPTY} if the planner has none. */
    public ModuleState module(ModuleKey key) {
        return modules.getOrDefault(key, ModuleState.EMPTY);
    }
}
