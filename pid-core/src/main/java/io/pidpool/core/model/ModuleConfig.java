package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Duration;
import java.util.Map;

/**
 * What an operator configures for a module.
 *
 * @param servers the number of client servers the module is expected to run: the module's PIDs
 *     are pre-split into this many slots, so servers that start one after another do not reshuffle
 *     accounts
 * @param monthlyDemand commands per month the module expects to need (drives recommendations)
 * @param minPerInstance the fewest PIDs each live instance must keep (recommendations respect it)
 * @param instanceWeights optional weights by instance id (default 1): held counts are proportional
 * @param rebalanceDelay how long a departed instance's share waits for a replacement before it is
 *     spread over the live instances, 0..{@link #MAX_REBALANCE_DELAY}; {@code null}: the server's
 *     default (the planner's {@code PlannerPolicy.rebalanceDelay()})
 */
public record ModuleConfig(
        ModuleKey key,
        int servers,
        long monthlyDemand,
        int minPerInstance,
        Map<InstanceId, Integer> instanceWeights,
        Duration rebalanceDelay) {

    public static final int MAX_SERVERS = 10_000;
    public static final int MAX_WEIGHT = 1_000;
    /** Longer than a day is taken for a typo: the share would sit unused that long. */
    public static final Duration MAX_REBALANCE_DELAY = Duration.ofHours(24);

    /** With the server's default rebalance delay. */
    public ModuleConfig(
            ModuleKey key,
            int servers,
            long monthlyDemand,
            int minPerInstance,
            Map<InstanceId, Integer> instanceWeights) {
        this(key, servers, monthlyDemand, minPerInstance, instanceWeights, null);
    }

    public ModuleConfig {
        requireRebalanceDelay(rebalanceDelay);
        requireNonNull(key, "module");
        requireArgument(
                servers >= 1 && servers <= MAX_SERVERS,
                "servers",
                "servers must be within 1..%d, was %d",
                MAX_SERVERS,
                servers);
        requireArgument(monthlyDemand >= 0, "monthlyDemand", "monthlyDemand must be >= 0, was %d", monthlyDemand);
        requireArgument(minPerInstance >= 0, "minPerInstance", "minPerInstance must be >= 0, was %d", minPerInstance);
        instanceWeights = instanceWeights == null ? Map.of() : Map.copyOf(instanceWeights);
        instanceWeights.forEach((instance, weight) -> requireArgument(
                weight >= 1 && weight <= MAX_WEIGHT,
                "instanceWeights",
                "weight of %s must be within 1..%d, was %d",
                instance,
                MAX_WEIGHT,
                weight));
    }

    /** The bounds of a module's own rebalance delay ({@code null}, the default, is allowed). */
    public static void requireRebalanceDelay(Duration delay) {
        if (delay != null) {
            requireArgument(
                    !delay.isNegative() && delay.compareTo(MAX_REBALANCE_DELAY) <= 0,
                    "rebalanceDelayMs",
                    "rebalanceDelayMs must be within 0..%d, was %d",
                    MAX_REBALANCE_DELAY.toMillis(),
                    delay.toMillis());
        }
    }

    /** This configuration with another rebalance delay ({@code null}: the server's default). */
    public ModuleConfig withRebalanceDelay(Duration delay) {
        return new ModuleConfig(key, servers, monthlyDemand, minPerInstance, instanceWeights, delay);
    }

    public static ModuleConfig of(ModuleKey key, int servers) {
        return new ModuleConfig(key, servers, 0, 0, Map.of());
    }

    public int weightOf(InstanceId instance) {
        return instanceWeights.getOrDefault(instance, 1);
    }
}
