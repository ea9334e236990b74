package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

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
 */
public record ModuleConfig(
        ModuleKey key, int servers, long monthlyDemand, int minPerInstance, Map<InstanceId, Integer> instanceWeights) {

    public static final int MAX_SERVERS = 10_000;
    public static final int MAX_WEIGHT = 1_000;

    public ModuleConfig {
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

    public static ModuleConfig of(ModuleKey key, int servers) {
        return new ModuleConfig(key, servers, 0, 0, Map.of());
    }

    public int weightOf(InstanceId instance) {
        return instanceWeights.getOrDefault(instance, 1);
    }
}
