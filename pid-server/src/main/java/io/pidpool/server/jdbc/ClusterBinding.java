package io.pidpool.server.jdbc;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * One cluster per database, table {@code pool_cluster} (migration V8_1): the first server to start on
 * a database records its cluster name; every later server must be of that cluster. Two clusters on
 * one database would both place the same PIDs (each leader reads every account), so both clusters'
 * instances would log in to one account.
 *
 * <p>Two servers of different clusters starting at the same moment both try to insert the one row;
 * the primary key lets one win, and the other reads the winner's name. Thread-safe.
 */
final class ClusterBinding {
    private ClusterBinding() {}

    /**
     * Binds the database to {@code cluster} if it is not bound yet.
     *
     * @param database the database's name in messages (its url without credentials)
     * @return the cluster the database is bound to: {@code cluster}
     * @throws PidPoolException {@code ILLEGAL_STATE} on {@code cluster} if another cluster holds it
     */
    static String bind(JdbiSession session, String database, String cluster, Instant now) {
        Names.requireToken(cluster, "cluster");
        String bound;
        try {
            bound = session.write("cluster", h -> read(h).orElseGet(() -> {
                h.createUpdate("INSERT INTO pool_cluster (id, cluster_name, bound_at) VALUES (1, :cluster, :at)")
                        .bind("cluster", cluster)
                        .bind("at", Rows.toDb(now))
                        .execute();
                return cluster;
            }));
        } catch (PidPoolException e) {
            if (e.code() != ErrorCode.CONFLICT) {
                throw e;
            }
            // a server of some cluster inserted the row at the same moment: its name wins
            bound = session.read(ClusterBinding::read)
                    .orElseThrow(() -> PidPoolException.unavailable("pool_cluster lost its row", e));
        }
        if (!bound.equals(cluster)) {
            throw new PidPoolException(
                    ErrorCode.ILLEGAL_STATE,
                    "cluster",
                    String.format(
                            "database %s belongs to cluster '%s'; this server is of cluster '%s' and refuses it"
                                    + " (a database serves one cluster: give cluster '%s' a database or schema"
                                    + " of its own, or set cluster: %s)",
                            database, bound, cluster, cluster, bound));
        }
        return bound;
    }

    private static Optional<String> read(Handle h) {
        return h.createQuery("SELECT cluster_name FROM pool_cluster WHERE id = 1")
                .mapTo(String.class)
                .findOne();
    }
}
