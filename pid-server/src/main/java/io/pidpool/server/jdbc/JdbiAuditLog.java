package io.pidpool.server.jdbc;

import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.AuditLog;
import io.pidpool.core.port.StorageLimits;
import java.util.List;

/**
 * {@link AuditLog} on table {@code audit_log}. A duplicate id is caught by the primary key alone
 * (no look-up first): appending is one statement. Thread-safe.
 */
final class JdbiAuditLog implements AuditLog {
    private static final String SELECT =
            "SELECT audit_id, occurred_at, actor, action_name, target, detail FROM audit_log";
    private static final String NEWEST_FIRST = " ORDER BY occurred_at DESC, audit_id DESC FETCH FIRST ";

    private final JdbiSession session;

    JdbiAuditLog(JdbiSession session) {
        this.session = session;
    }

    @Override
    public void append(AuditEntry entry) {
        Preconditions.requireNonNull(entry, "entry");
        session.write("id", h -> h.createUpdate("INSERT INTO audit_log (audit_id, occurred_at, actor, action_name,"
                        + " target, detail) VALUES (:id, :at, :actor, :action, :target, :detail)")
                .bind("id", entry.id())
                .bind("at", Rows.toDb(entry.at()))
                .bind("actor", entry.actor())
                .bind("action", entry.action())
                .bind("target", entry.target())
                .bind("detail", entry.detail())
                .execute());
    }

    @Override
    public List<AuditEntry> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return session.read(h -> h.createQuery(SELECT + NEWEST_FIRST + limit + " ROWS ONLY")
                .map((rs, ctx) -> row(rs))
                .list());
    }

    @Override
    public List<AuditEntry> olderThan(long id, int limit) {
        StorageLimits.requireLimit(limit);
        return session.read(h -> {
            var at = h.createQuery("SELECT occurred_at FROM audit_log WHERE audit_id = :id")
                    .bind("id", id)
                    .map((rs, ctx) -> rs.getObject(1))
                    .findOne();
            if (at.isEmpty()) {
                return List.<AuditEntry>of();
            }
            // the stored value as it is, so the comparison is exact whatever the column type
            return h.createQuery(SELECT + " WHERE occurred_at < :at OR (occurred_at = :at AND audit_id < :id)"
                            + NEWEST_FIRST + limit + " ROWS ONLY")
                    .bindByType("at", at.get(), at.get().getClass())
                    .bind("id", id)
                    .map((rs, ctx) -> row(rs))
                    .list();
        });
    }

    @Override
    public List<AuditEntry> forTarget(String target, int limit) {
        Preconditions.requireNonNull(target, "target");
        StorageLimits.requireLimit(limit);
        return session.read(h -> h.createQuery(SELECT + " WHERE target = :target" + NEWEST_FIRST + limit + " ROWS ONLY")
                .bind("target", target)
                .map((rs, ctx) -> row(rs))
                .list());
    }

    private static AuditEntry row(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new AuditEntry(
                rs.getLong("audit_id"),
                Rows.instant(rs, "occurred_at"),
                rs.getString("actor"),
                rs.getString("action_name"),
                rs.getString("target"),
                rs.getString("detail"));
    }
}
