package io.pidpool.server.jdbc;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.SlotBinding;
import io.pidpool.core.port.SlotRepository;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * {@link SlotRepository} on table {@code pool_slot}. A bind locks the module row first, so binds of
 * one module are serialised and the "instance holds another slot" check cannot race. Thread-safe.
 */
final class JdbiSlotRepository implements SlotRepository {
    private final JdbiSession session;
    private final Clock clock;

    JdbiSlotRepository(JdbiSession session, Clock clock) {
        this.session = session;
        this.clock = clock;
    }

    @Override
    public void bind(SlotBinding binding) {
        Preconditions.requireNonNull(binding, "binding");
        String module = binding.module().toString();
        session.write("slot", h -> {
            Optional<Integer> servers = h.createQuery(
                            "SELECT servers FROM pool_module WHERE module_key = :module FOR UPDATE")
                    .bind("module", module)
                    .mapTo(Integer.class)
                    .findOne();
            if (servers.isEmpty()) {
                throw PidPoolException.notFound("module", "module %s does not exist", binding.module());
            }
            Preconditions.requireArgument(
                    binding.slot() < servers.get(),
                    "slot",
                    "slot %d is not below the %d servers of %s",
                    binding.slot(),
                    servers.get(),
                    binding.module());
            Optional<SlotBinding> stored = h.createQuery("SELECT module_key, slot_index, instance_id, leader_epoch"
                            + " FROM pool_slot WHERE module_key = :module AND slot_index = :slot")
                    .bind("module", module)
                    .bind("slot", binding.slot())
                    .map((rs, ctx) -> row(rs))
                    .findOne();
            if (stored.isPresent()) {
                if (binding.epoch().isOlderThan(stored.get().epoch())) {
                    throw fenced(stored.get(), binding.epoch());
                }
                if (!stored.get().instance().equals(binding.instance())) {
                    throw PidPoolException.conflict(
                            "slot",
                            "slot %d of %s is held by %s",
                            binding.slot(),
                            binding.module(),
                            stored.get().instance());
                }
            }
            Optional<Integer> other = h.createQuery("SELECT slot_index FROM pool_slot"
                            + " WHERE module_key = :module AND instance_id = :instance AND NOT (slot_index = :slot)")
                    .bind("module", module)
                    .bind("instance", binding.instance().value())
                    .bind("slot", binding.slot())
                    .mapTo(Integer.class)
                    .findFirst();
            if (other.isPresent()) {
                throw PidPoolException.conflict(
                        "instance",
                        "instance %s already holds slot %d of %s",
                        binding.instance(),
                        other.get(),
                        binding.module());
            }
            String sql = stored.isPresent()
                    ? "UPDATE pool_slot SET leader_epoch = :epoch WHERE module_key = :module AND slot_index = :slot"
                    : "INSERT INTO pool_slot (module_key, slot_index, instance_id, leader_epoch, bound_at)"
                            + " VALUES (:module, :slot, :instance, :epoch, :now)";
            h.createUpdate(sql)
                    .bind("module", module)
                    .bind("slot", binding.slot())
                    .bind("instance", binding.instance().value())
                    .bind("epoch", binding.epoch().value())
                    .bind("now", Rows.toDb(clock.instant()))
                    .execute();
            return null;
        });
    }

    @Override
    public boolean release(ModuleKey module, int slot, Epoch epoch) {
        Preconditions.requireNonNull(module, "module");
        Preconditions.requireNonNull(epoch, "epoch");
        return session.write("slot", h -> {
            Optional<SlotBinding> stored = h.createQuery("SELECT module_key, slot_index, instance_id, leader_epoch"
                            + " FROM pool_slot WHERE module_key = :module AND slot_index = :slot FOR UPDATE")
                    .bind("module", module.toString())
                    .bind("slot", slot)
                    .map((rs, ctx) -> row(rs))
                    .findOne();
            if (stored.isEmpty()) {
                return false;
            }
            if (epoch.isOlderThan(stored.get().epoch())) {
                throw fenced(stored.get(), epoch);
            }
            h.createUpdate("DELETE FROM pool_slot WHERE module_key = :module AND slot_index = :slot")
                    .bind("module", module.toString())
                    .bind("slot", slot)
                    .execute();
            return true;
        });
    }

    @Override
    public List<SlotBinding> findByModule(ModuleKey module) {
        Preconditions.requireNonNull(module, "module");
        return sorted(session.read(h -> h.createQuery("SELECT module_key, slot_index, instance_id, leader_epoch"
                        + " FROM pool_slot WHERE module_key = :module")
                .bind("module", module.toString())
                .map((rs, ctx) -> row(rs))
                .list()));
    }

    @Override
    public List<SlotBinding> findAll() {
        return sorted(session.read(
                h -> h.createQuery("SELECT module_key, slot_index, instance_id, leader_epoch FROM pool_slot")
                        .map((rs, ctx) -> row(rs))
                        .list()));
    }

    private static SlotBinding row(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new SlotBinding(
                ModuleKey.parse(rs.getString("module_key")),
                rs.getInt("slot_index"),
                InstanceId.of(rs.getString("instance_id")),
                new Epoch(rs.getLong("leader_epoch")));
    }

    private static List<SlotBinding> sorted(List<SlotBinding> rows) {
        var copy = new ArrayList<>(rows);
        copy.sort(Comparator.comparing(SlotBinding::module).thenComparingInt(SlotBinding::slot));
        return List.copyOf(copy);
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
