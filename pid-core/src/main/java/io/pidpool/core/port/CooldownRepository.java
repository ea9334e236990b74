package io.pidpool.core.port;

import java.util.List;

/**
 * The PIDs in cooldown with their end times ({@link Cooldown}), written by the leader only. Deleting a
 * PID deletes its cooldown. Every method is atomic. Thread-safe.
 *
 * <p>The rows are the source of truth for the end time; the PID's {@link
 * io.pidpool.core.model.PidAvailability#COOLDOWN} status is what the read API shows.
 */
public interface CooldownRepository {
    /**
     * Starts a cooldown, or replaces the one the PID has.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code NOT_FOUND} on {@code pid.id} if the PID
     *     does not exist
     */
    void put(Cooldown cooldown);

    /**
     * Ends a cooldown.
     *
     * @return whether the PID had one
     */
    boolean remove(String pidId);

    /** Every cooldown, ordered by PID id. */
    List<Cooldown> findAll();
}
