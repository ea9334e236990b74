package io.pidpool.server.jdbc;

import java.util.Collection;
import org.jdbi.v3.core.Handle;

/**
 * The account version of tables {@code pool_account_version} and {@code pool_account_change} (V7):
 * every transaction that changes an account or a module calls {@link #bump} before its other writes
 * and {@link #logChanged} with the PIDs it touched. The increment takes the row lock of the single
 * version row and keeps it to the commit, so writers of accounts are serialised at that row and
 * their versions are committed in increasing order: a reader's snapshot of version {@code v} holds
 * exactly the changes of versions up to {@code v}, and the log rows above {@code v} name every
 * account that changed since (deletes included).
 *
 * <p>Writes that bypass the repositories (SQL by hand) are not counted; the leader's periodic full
 * reload still catches them, as it did before.
 */
final class AccountVersion {
    /** The version and the log's horizon: log rows of versions below {@code prunedBelow} may be gone. */
    record State(long version, long prunedBelow) {}

    private AccountVersion() {}

    /** Increments the version in the running transaction and returns the new value. */
    static long bump(Handle h) {
        int updated = h.createUpdate("UPDATE pool_account_version SET version = version + 1 WHERE id = 1")
                .execute();
        if (updated != 1) {
            throw new IllegalStateException("pool_account_version has no row 1 (migration V7 missing?)");
        }
        return read(h).version();
    }

    static State read(Handle h) {
        return read(h, "");
    }

    private static State read(Handle h, String lock) {
        return h.createQuery("SELECT version, pruned_below FROM pool_account_version WHERE id = 1" + lock)
                .map((rs, ctx) -> new State(rs.getLong(1), rs.getLong(2)))
                .one();
    }

    /** Logs that these PIDs changed in {@code version}. */
    static void logChanged(Handle h, long version, Collection<String> pidIds) {
        var rows = h.prepareBatch("INSERT INTO pool_account_change (change_version, pid_id) VALUES (:v, :id)");
        for (String id : pidIds) {
            rows.bind("v", version).bind("id", id).add();
            if (rows.size() >= Rows.CHUNK) {
                rows.execute();
            }
        }
        if (rows.size() > 0) {
            rows.execute();
        }
    }

    /**
     * Forgets the log rows of versions older than {@code keep} versions before the current one. The
     * horizon is raised in the same transaction, under the version row's lock, so a reader sees either
     * the rows or the horizon that says they are gone.
     */
    static void prune(Handle h, long keep) {
        State seen = read(h);
        if (seen.version() - keep + 1 <= seen.prunedBelow()) {
            return; // nothing to forget: the writers' lock is not taken
        }
        State now = read(h, " FOR UPDATE");
        long below = now.version() - keep + 1; // the newest keep versions stay
        if (below <= now.prunedBelow()) {
            return;
        }
        h.createUpdate("UPDATE pool_account_version SET pruned_below = :below WHERE id = 1")
                .bind("below", below)
                .execute();
        h.createUpdate("DELETE FROM pool_account_change WHERE change_version < :below")
                .bind("below", below)
                .execute();
    }
}
