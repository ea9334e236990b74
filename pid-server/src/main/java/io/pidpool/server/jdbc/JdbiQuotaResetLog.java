package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.QuotaResetLog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * {@link QuotaResetLog} on table {@code quota_reset} (migration V6). {@link #record} locks the PID's
 * row ({@code FOR UPDATE}) and updates it, or inserts generation 1 (portable, no vendor upsert); it
 * joins the calling thread's transaction, so it commits with the batch. Thread-safe.
 */
final class JdbiQuotaResetLog implements QuotaResetLog {
    private final JdbiSession session;

    JdbiQuotaResetLog(JdbiSession session) {
        this.session = session;
    }

    @Override
    public List<Reset> record(Collection<String> pidIds, Instant at) {
        Preconditions.requireNonNull(pidIds, "pidIds");
        Preconditions.requireNonNull(at, "at");
        return session.write(null, h -> {
            List<Reset> out = new ArrayList<>();
            for (String pid : new LinkedHashSet<>(pidIds)) {
                Optional<Long> current = h.createQuery(
                                "SELECT generation FROM quota_reset WHERE pid_id = :id FOR UPDATE")
                        .bind("id", pid)
                        .mapTo(Long.class)
                        .findOne();
                long next = current.map(g -> g + 1).orElse(1L);
                if (current.isPresent()) {
                    h.createUpdate("UPDATE quota_reset SET generation = :g, reset_at = :at WHERE pid_id = :id")
                            .bind("id", pid)
                            .bind("g", next)
                            .bind("at", Rows.toDb(at))
                            .execute();
                } else {
                    h.createUpdate("INSERT INTO quota_reset (pid_id, generation, reset_at) VALUES (:id, :g, :at)")
                            .bind("id", pid)
                            .bind("g", next)
                            .bind("at", Rows.toDb(at))
                            .execute();
                }
                out.add(new Reset(pid, next, at));
            }
            return out;
        });
    }

    @Override
    public List<Reset> latest() {
        return session.read(h -> h.createQuery("SELECT pid_id, generation, reset_at FROM quota_reset ORDER BY pid_id")
                .map((rs, ctx) ->
                        new Reset(rs.getString("pid_id"), rs.getLong("generation"), Rows.instant(rs, "reset_at")))
                .list());
    }
}
