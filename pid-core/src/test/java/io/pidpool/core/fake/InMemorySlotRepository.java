package io.pidpool.core.fake;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.SlotBinding;
import io.pidpool.core.port.SlotRepository;
import java.util.List;

/** {@link SlotRepository} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemorySlotRepository implements SlotRepository {
    private final InMemoryDatabase db;

    InMemorySlotRepository(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void bind(SlotBinding binding) {
        Preconditions.requireNonNull(binding, "binding");
        db.write(() -> {
            ModuleConfig module = db.modules.get(binding.module());
            if (module == null) {
                throw PidPoolException.notFound("module", "module %s does not exist", binding.module());
            }
            Preconditions.requireArgument(
                    binding.slot() < module.servers(),
                    "slot",
                    "slot %d is not below the %d servers of %s",
                    binding.slot(),
                    module.servers(),
                    binding.module());
            var key = new InMemoryDatabase.SlotKey(binding.module(), binding.slot());
            SlotBinding stored = db.slots.get(key);
            if (stored != null) {
                if (binding.epoch().isOlderThan(stored.epoch())) {
                    throw fenced(stored, binding.epoch());
                }
                if (!stored.instance().equals(binding.instance())) {
                    throw PidPoolException.conflict(
                            "slot", "slot %d of %s is held by %s", binding.slot(), binding.module(), stored.instance());
                }
            }
            for (SlotBinding other : db.slots.values()) {
                if (other.module().equals(binding.module())
                        && other.instance().equals(binding.instance())
                        && other.slot() != binding.slot()) {
                    throw PidPoolException.conflict(
                            "instance",
                            "instance %s already holds slot %d of %s",
                            binding.instance(),
                            other.slot(),
                            binding.module());
                }
            }
            db.slots.put(key, binding);
            return null;
        });
    }

    @Override
    public boolean release(ModuleKey module, int slot, Epoch epoch) {
        Preconditions.requireNonNull(module, "module");
        Preconditions.requireNonNull(epoch, "epoch");
        return db.write(() -> {
            var key = new InMemoryDatabase.SlotKey(module, slot);
            SlotBinding stored = db.slots.get(key);
            if (stored == null) {
                return false;
            }
            if (epoch.isOlderThan(stored.epoch())) {
                throw fenced(stored, epoch);
            }
            db.slots.remove(key);
            return true;
        });
    }

    @Override
    public List<SlotBinding> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        return db.read(() -> db.slots.values().stream()
                .filter(b -> b.module().equals(module))
                .toList());
    }

    @Override
    public List<SlotBinding> findAll() {
        return db.read(db.slots::valuesList);
    }

    private static PidPoolException fenced(SlotBinding stored, Epoch by) {
        return new PidPoolException(
                ErrorCode.FENCED,
                "epoch",
                String.format(
                        "slot %d of %s was bound by epoch %d; epoch %d is fenced off",
                        stored.slot(), stored.module(), stored.epoch().value(), by.value()));
    }
}
