package io.pidpool.worker.ring;

import io.pidpool.core.ring.ConsistentHashRing;
import java.io.Closeable;

/**
 * This worker's place in its group's rings, one per task type ({@link GroupRing}). The rings are
 * advisory: they decide which ranges a worker polls for which types, while the task table's conditional claims keep two workers whose views disagree for a
 * moment from running one task at once.
 *
 * <p>Thread-safe; listeners are called on the membership's own thread and must not block.
 */
public interface RingMembership extends Closeable {
    /** This worker's member id (the name of its ZooKeeper node). */
    String memberId();

    /**
     * The latest view of the live members and the task types each runs, with one ring per type
     * (empty before the first view arrives). A new view is a new object: compare by identity to
     * notice a change cheaply.
     */
    GroupRing groupRing();

    /** The ring of every live member whatever it runs: {@code groupRing().all()}. */
    default ConsistentHashRing ring() {
        return groupRing().all();
    }

    /** Registers and starts watching; returns without waiting for the first view. */
    void start();

    /** Called after every change of {@link #groupRing()}. */
    void addListener(Runnable listener);

    /** Leaves the ring (deletes this worker's node) and stops watching. Idempotent. */
    @Override
    void close();
}
