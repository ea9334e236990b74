package io.pidpool.core.fake;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.LeaderFence;

/**
 * {@link LeaderFence} over an {@link InMemoryDatabase}: the store's lock is held for a whole unit of
 * work, which is what keeps the epoch from changing between a check and the end of the unit.
 * Thread-safe.
 */
final class InMemoryLeaderFence implements LeaderFence {
    private final InMemoryDatabase db;

    InMemoryLeaderFence(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void raise(Epoch epoch) {
        Preconditions.requireNonNull(epoch, "epoch");
        db.write(() -> {
            Epoch stored = stored();
            if (epoch.isOlderThan(stored)) {
                throw LeaderFence.fenced(stored, epoch);
            }
            if (!epoch.equals(stored)) {
                db.leaderEpoch.put(0, epoch);
            }
            return null;
        });
    }

    @Override
    public void check(Epoch epoch) {
        Preconditions.requireNonNull(epoch, "epoch");
        db.read(() -> {
            Epoch stored = stored();
            if (!epoch.equals(stored)) {
                throw LeaderFence.fenced(stored, epoch);
            }
            return null;
        });
    }

    @Override
    public Epoch current() {
        return db.read(this::stored);
    }

    private Epoch stored() {
        Epoch stored = db.leaderEpoch.get(0);
        return stored == null ? Epoch.NONE : stored;
    }
}
