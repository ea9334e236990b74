package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;

/**
 * Slot {@code slot} (0-based, below the module's {@link ModuleConfig#servers()}) of a module is
 * taken by {@code instance}: the instance serves that slot's share of the module's PIDs. When an
 * instance dies, its slot is released and the instance that replaces it takes the same share (seed
 * 000, problem 2), so a restart with a new address does not reshuffle accounts.
 */
public record SlotBinding(ModuleKey module, int slot, InstanceId instance, Epoch epoch) {
    public SlotBinding {
        requireNonNull(module, "module");
        requireArgument(
                slot >= 0 && slot < ModuleConfig.MAX_SERVERS,
                "slot",
                "slot must be within 0..%d, was %d",
                ModuleConfig.MAX_SERVERS - 1,
                slot);
        requireNonNull(instance, "instance");
        requireNonNull(epoch, "epoch");
    }
}
