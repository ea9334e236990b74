package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;
import java.util.Collection;
import java.util.List;

/**
 * Durable RESET_QUOTA (docs/quota.md §6a): every reset of a PID's quota is recorded with a per-PID
 * generation (1, 2, 3, ...) in the same transaction as the batch that ordered it, so a reset that
 * could not reach Redis before the committing leader died is re-applied by the next leader's
 * reconciliation, exactly once (Redis keeps the highest generation applied next to the counters).
 *
 * <p>Rows are never deleted with the PID: generations keep increasing across a delete and a new ADD
 * of the same id, so a Redis marker left by the old PID never hides a new reset. Thread-safe.
 */
public interface QuotaResetLog {
    /**
     * One recorded reset.
     *
     * @param at the commit time: the reset clears the quota month containing it
     */
    record Reset(String pidId, long generation, Instant at) {
        public Reset {
            requireNonNull(pidId, "pidId");
            requireNonNull(at, "at");
            requireArgument(generation >= 1, "generation", "generation must be >= 1, was %d", generation);
        }
    }

    /**
     * Records a reset of each PID at {@code at}, each with its previous generation + 1; joins the
     * caller's transaction (the batch's) if there is one.
     */
    List<Reset> record(Collection<String> pidIds, Instant at);

    /** The latest reset of every PID that ever had one. */
    List<Reset> latest();

    /** Records nothing (no durable resets: a reset lost with Redis down stays lost). */
    static QuotaResetLog none() {
        return new QuotaResetLog() {
            @Override
            public List<Reset> record(Collection<String> pidIds, Instant at) {
                return List.of();
            }

            @Override
            public List<Reset> latest() {
                return List.of();
            }
        };
    }
}
