package io.pidpool.core.port;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;

/**
 * The store's fence against a deposed leader: the highest leader epoch the store has seen, one value
 * for the whole store. A new leader raises it when its term starts; every unit of work in which a
 * leader writes ({@link Transactor}) checks it as its last step and holds it until the commit, so a
 * leader whose epoch is no longer the stored one commits nothing, and a successor's raise waits only
 * for a unit that checked before it (it cannot slip in between the check and the commit).
 *
 * <p>Why last and not first: the check's lock is held to the end of the unit. Taken first, a deposed
 * leader stalled in the middle of a unit (a GC pause, SIGSTOP, a slow statement) would hold up its
 * successor's term start for as long as it stalls; taken last, the successor waits at most for a
 * commit, and the stalled unit fails its check when it goes on.
 *
 * <p>ZooKeeper's {@code /epoch} check fences the leader's ZooKeeper writes; this fences its database
 * writes in the same way, in the same transaction as the write itself.
 *
 * <p>Every method is atomic. Thread-safe.
 */
public interface LeaderFence {
    /**
     * Raises the stored epoch to {@code epoch}; raising it to the value it has changes nothing. Joins
     * the caller's unit of work if there is one.
     *
     * @throws PidPoolException {@code FENCED} on {@code epoch} if a newer epoch is stored (and nothing
     *     changes)
     */
    void raise(Epoch epoch);

    /**
     * Checks that the stored epoch is {@code epoch} and keeps it from changing until the caller's unit
     * of work ends (a row lock in a database). Call it inside the unit, after its writes, as its last
     * step (see above); outside a unit it only checks.
     *
     * @throws PidPoolException {@code FENCED} on {@code epoch} if another epoch is stored: a newer leader
     *     raised it, or this leader never did
     */
    void check(Epoch epoch);

    /** The stored epoch; {@link Epoch#NONE} while no leader has raised it. */
    Epoch current();

    /** The error for a write by a leader whose epoch is not the stored one. */
    static PidPoolException fenced(Epoch stored, Epoch by) {
        return new PidPoolException(
                ErrorCode.FENCED,
                "epoch",
                String.format(
                        "the store is fenced at leader epoch %d; a write of epoch %d is refused",
                        stored.value(), by.value()));
    }
}
