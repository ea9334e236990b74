package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.PidRepository;
import java.util.List;

/**
 * {@link CooldownRepository} in the {@link InMemoryDatabase} of the given PIDs: its rows take part in
 * that store's units of work (a unit that fails takes its cooldowns back, as in the database), and a
 * deleted PID's cooldown disappears with it, like the database's cascade. Thread-safe.
 */
public final class InMemoryCooldownRepository implements CooldownRepository {
    private final InMemoryDatabase db;

    /** @param pids an {@link InMemoryDatabase}'s PID repository, whose store keeps the cooldowns */
    public InMemoryCooldownRepository(PidRepository pids) {
        Preconditions.requireArgument(
                pids instanceof InMemoryPidRepository, "pids", "must be an InMemoryDatabase's, was %s", pids);
        this.db = ((InMemoryPidRepository) pids).db();
    }

    @Override
    public void put(Cooldown cooldown) {
        Preconditions.requireNonNull(cooldown, "cooldown");
        db.write(() -> {
            if (!db.pids.contains(cooldown.pidId())) {
                throw PidPoolException.notFound("pid.id", "PID %s does not exist", cooldown.pidId());
            }
            db.cooldowns.put(cooldown.pidId(), cooldown);
            return null;
        });
    }

    @Override
    public boolean remove(String pidId) {
        return db.write(() -> {
            boolean had = db.cooldowns.contains(pidId);
            db.cooldowns.remove(pidId);
            return had;
        });
    }

    @Override
    public List<Cooldown> findAll() {
        return db.read(() -> db.cooldowns.values().stream()
                .filter(c -> db.pids.contains(c.pidId()))
                .toList());
    }
}
