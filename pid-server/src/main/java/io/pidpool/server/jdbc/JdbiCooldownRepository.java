package io.pidpool.server.jdbc;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import java.util.List;

/**
 * {@link CooldownRepository} on table {@code pool_pid_cooldown} (migration V4). A put locks the PID
 * row, then replaces the cooldown (delete + insert: portable, no vendor upsert). Thread-safe.
 */
final class JdbiCooldownRepository implements CooldownRepository {
    private final JdbiSession session;

    JdbiCooldownRepository(JdbiSession session) {
        this.session = session;
    }

    @Override
    public void put(Cooldown cooldown) {
        Preconditions.requireNonNull(cooldown, "cooldown");
        session.write("pid.id", h -> {
            boolean exists = h.createQuery("SELECT pid_id FROM pool_pid WHERE pid_id = :id FOR UPDATE")
                    .bind("id", cooldown.pidId())
                    .mapTo(String.class)
                    .findOne()
                    .isPresent();
            if (!exists) {
                throw PidPoolException.notFound("pid.id", "PID %s does not exist", cooldown.pidId());
            }
            h.createUpdate("DELETE FROM pool_pid_cooldown WHERE pid_id = :id")
                    .bind("id", cooldown.pidId())
                    .execute();
            h.createUpdate("INSERT INTO pool_pid_cooldown (pid_id, until_at, cause, started_at)"
                            + " VALUES (:id, :until, :cause, :started)")
                    .bind("id", cooldown.pidId())
                    .bind("until", Rows.toDb(cooldown.until()))
                    .bind("cause", cooldown.cause())
                    .bind("started", Rows.toDb(cooldown.startedAt()))
                    .execute();
            return null;
        });
    }

    @Override
    public boolean remove(String pidId) {
        Preconditions.requireNonNull(pidId, "pid.id");
        return session.write(
                null,
                h -> h.createUpdate("DELETE FROM pool_pid_cooldown WHERE pid_id = :id")
                                .bind("id", pidId)
                                .execute()
                        > 0);
    }

    @Override
    public List<Cooldown> findAll() {
        return session.read(
                h -> h.createQuery("SELECT pid_id, until_at, cause, started_at FROM pool_pid_cooldown ORDER BY pid_id")
                        .map((rs, ctx) -> new Cooldown(
                                rs.getString("pid_id"),
                                Rows.instant(rs, "until_at"),
                                rs.getString("cause"),
                                Rows.instant(rs, "started_at")))
                        .list());
    }
}
