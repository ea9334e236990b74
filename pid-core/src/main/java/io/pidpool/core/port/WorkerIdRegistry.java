package io.pidpool.core.port;

import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Exclusive Snowflake worker ids 0..31 for one participant (one process, one ZooKeeper session):
 * the {@code /worker-ids/<n>} EPHEMERAL nodes. One registry instance is one participant; it
 * holds at most one slot at a time. The ZooKeeper adapter writes {@link #owner()} into the node, so
 * a participant recognises its own slot after a reconnect.
 *
 * <p><b>Exclusivity.</b> No two participants hold the same slot at once. A slot is freed by {@link
 * #release()} or when its holder's session ends (a killed process's slot comes free after the
 * session timeout); then another participant may take it.
 *
 * <p><b>Loss.</b> The {@link LossListener} passed to {@link #acquire} is called as soon as this
 * participant can no longer be sure it holds its slot: for ZooKeeper on SUSPENDED (not only on LOST),
 * because by the time the session is declared expired another process may already have the slot. On
 * that call the caller must stop issuing ids with that worker id at once, then call {@link #acquire}
 * again, preferring the old slot: with the same session still alive it gets the same slot back; else
 * whichever is free. After a loss, {@link #current()} is empty until the next acquire.
 *
 * <p><b>Thread-safety.</b> Implementations are thread-safe. Listeners are called on an internal thread
 * (never while a lock of the registry is held) and must not block for long; an exception thrown by a
 * listener is logged and swallowed.
 */
public interface WorkerIdRegistry extends AutoCloseable {

    /** The token this participant writes into its slot node; a {@code Names} token. */
    String owner();

    /**
     * Takes a free slot, preferring {@code preferred} when it is free (see {@link
     * io.pidpool.core.id.WorkerSlots} for the policy). Idempotent: while this participant holds a
     * slot, returns that slot again (ignoring {@code preferred}) and replaces the listener.
     *
     * @throws WorkerSlotsExhaustedException when all 32 slots are taken (retryable)
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} for a preferred slot
     *     outside 0..31, {@code UNAVAILABLE} when the coordination service cannot be reached
     */
    WorkerSlot acquire(OptionalInt preferred, LossListener listener);

    /** The slot this participant holds now, if any. */
    Optional<WorkerSlot> current();

    /**
     * Gives the slot back. Idempotent; a no-op when nothing is held. Never frees a slot that another
     * participant holds, even if this participant once held the same number (its node is deleted only
     * if it is still this participant's). The listener is not called.
     */
    void release();

    /** The slots taken by any participant, as last seen (a snapshot, for monitoring and diagnosis). */
    Set<Integer> takenSlots();

    /** Releases the slot and stops watching; the registry cannot be used afterwards. Idempotent. */
    @Override
    void close();

    /** Told when the slot may no longer be this participant's. */
    @FunctionalInterface
    interface LossListener {
        void onLost(WorkerSlot slot);
    }
}
