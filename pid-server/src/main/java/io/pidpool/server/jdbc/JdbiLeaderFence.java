package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.LeaderFence;
import org.jdbi.v3.core.Handle;

/**
 * {@link LeaderFence} on table {@code pool_leader_epoch} (migration V8), one row. A raise is a
 * conditional {@code UPDATE ... WHERE epoch < :epoch} (it waits for the row lock of a leader
 * transaction that checked before it); a check is {@code SELECT ... FOR UPDATE}, whose lock lasts to
 * the end of the caller's transaction. Both read the latest committed row at READ COMMITTED on all
 * three databases. Thread-safe.
 */
final class JdbiLeaderFence implements LeaderFence {
    private final JdbiSession session;

    JdbiLeaderFence(JdbiSession session) {
        this.session = session;
    }

    @Override
    public void raise(Epoch epoch) {
        Preconditions.requireNonNull(epoch, "epoch");
        session.write(null, h -> {
            h.createUpdate("UPDATE pool_leader_epoch SET epoch = :epoch WHERE id = 1 AND epoch < :epoch")
                    .bind("epoch", epoch.value())
                    .execute();
            Epoch stored = read(h, "");
            if (!stored.equals(epoch)) {
                throw LeaderFence.fenced(stored, epoch); // newer: the update changed nothing
            }
            return null;
        });
    }

    @Override
    public void check(Epoch epoch) {
        Preconditions.requireNonNull(epoch, "epoch");
        session.write(null, h -> {
            Epoch stored = read(h, " FOR UPDATE");
            if (!stored.equals(epoch)) {
                throw LeaderFence.fenced(stored, epoch);
            }
            return null;
        });
    }

    @Override
    public Epoch current() {
        return session.read(h -> read(h, ""));
    }

    private static Epoch read(Handle h, String lock) {
        return h.createQuery("SELECT epoch FROM pool_leader_epoch WHERE id = 1" + lock)
                .mapTo(Long.class)
                .findOne()
                .map(Epoch::new)
                .orElseThrow(() -> new IllegalStateException("pool_leader_epoch has no row 1 (migration V8 missing?)"));
    }
}
