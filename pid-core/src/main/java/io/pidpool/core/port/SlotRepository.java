package io.pidpool.core.port;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import java.util.List;

/**
 * Which instance holds which slot of a module (see {@link SlotBinding}). A slot has at most one
 * instance and an instance at most one slot per module. Writes are fenced by epoch like
 * {@link AssignmentRepository}. Every method is atomic. Thread-safe.
 */
public interface SlotRepository {
    /**
     * Binds a free slot, or re-stamps an existing identical binding with {@code binding.epoch()}.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code module} for an
     *     unknown module, {@code INVALID_ARGUMENT} on {@code slot} if the slot is not below the
     *     module's servers, {@code FENCED} on {@code epoch} if the stored binding of that slot is
     *     newer, {@code CONFLICT} on {@code slot} if another instance holds the slot, {@code CONFLICT}
     *     on {@code instance} if the instance holds another slot of the module
     */
    void bind(SlotBinding binding);

    /**
     * Frees a slot.
     *
     * @return whether it was bound
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} if the binding is newer
     */
    boolean release(ModuleKey module, int slot, Epoch epoch);

    /** Bindings of one module, ordered by slot. */
    List<SlotBinding> findByModule(ModuleKey module);

    /** Every binding, ordered by module then slot. */
    List<SlotBinding> findAll();
}
