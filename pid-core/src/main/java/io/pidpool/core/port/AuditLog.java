package io.pidpool.core.port;

import java.util.List;

/** Every operator action, append-only (docs/design.md §2 promise 6). Thread-safe. */
public interface AuditLog {
    /**
     * Appends an entry.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code CONFLICT} on {@code id} if the id exists
     */
    void append(AuditEntry entry);

    /** The newest entries, newest first (by time, then id). */
    List<AuditEntry> recent(int limit);

    /**
     * The next page after entry {@code id} in the order of {@link #recent}: the newest entries older
     * than it (earlier, or as old with a smaller id), newest first, at most {@code limit}. Empty when
     * there is no entry {@code id}.
     */
    List<AuditEntry> olderThan(long id, int limit);

    /** The newest entries about {@code target}, newest first. */
    List<AuditEntry> forTarget(String target, int limit);
}
