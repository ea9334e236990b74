package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.core.port.PidRepository;
import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * {@link CooldownRepository} in memory, checking PIDs against a {@link PidRepository} (a deleted PID's
 * cooldown disappears with it, like the database's cascade). Thread-safe.
 */
public final class InMemoryCooldownRepository implements CooldownRepository {
    private final PidRepository pids;
    private final ConcurrentSkipListMap<String, Cooldown> rows = new ConcurrentSkipListMap<>();

    public InMemoryCooldownRepository(PidRepository pids) {
        this.pids = pids;
    }

    @Override
    public void put(Cooldown cooldown) {
        Preconditions.requireNonNull(cooldown, "cooldown");
        if (pids.find(cooldown.pidId()).isEmpty()) {
            throw PidPoolException.notFound("pid.id", "PID %s does not exist", cooldown.pidId());
        }
        rows.put(cooldown.pidId(), cooldown);
    }

    @Override
    public boolean remove(String pidId) {
        return rows.remove(pidId) != null;
    }

    @Override
    public List<Cooldown> findAll() {
        rows.keySet().removeIf(id -> pids.find(id).isEmpty());
        return List.copyOf(rows.values());
    }
}
