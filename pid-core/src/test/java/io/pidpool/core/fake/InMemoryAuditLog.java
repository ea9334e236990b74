package io.pidpool.core.fake;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.AuditLog;
import io.pidpool.core.port.StorageLimits;
import java.util.Comparator;
import java.util.List;

/** {@link AuditLog} over an {@link InMemoryDatabase}. Thread-safe. */
public final class InMemoryAuditLog implements AuditLog {
    private static final Comparator<AuditEntry> NEWEST_FIRST = Comparator.comparing(AuditEntry::at)
            .thenComparingLong(AuditEntry::id)
            .reversed();

    private final InMemoryDatabase db;

    InMemoryAuditLog(InMemoryDatabase db) {
        this.db = db;
    }

    @Override
    public void append(AuditEntry entry) {
        Preconditions.requireNonNull(entry, "entry");
        db.write(() -> {
            if (db.audit.contains(entry.id())) {
                throw PidPoolException.conflict("id", "audit entry %d already exists", entry.id());
            }
            db.audit.put(entry.id(), entry);
            return null;
        });
    }

    @Override
    public List<AuditEntry> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return db.read(() ->
                db.audit.values().stream().sorted(NEWEST_FIRST).limit(limit).toList());
    }

    @Override
    public List<AuditEntry> forTarget(String target, int limit) {
        Preconditions.requireNonNull(target, "target");
        StorageLimits.requireLimit(limit);
        return db.read(() -> db.audit.values().stream()
                .filter(e -> e.target().equals(target))
                .sorted(NEWEST_FIRST)
                .limit(limit)
                .toList());
    }

    @Override
    public List<AuditEntry> olderThan(long id, int limit) {
        StorageLimits.requireLimit(limit);
        return db.read(() -> {
            AuditEntry from = db.audit.get(id);
            if (from == null) {
                return List.<AuditEntry>of();
            }
            return db.audit.values().stream()
                    .filter(e -> NEWEST_FIRST.compare(e, from) > 0)
                    .sorted(NEWEST_FIRST)
                    .limit(limit)
                    .toList();
        });
    }
}
