package io.pidpool.worker.ring;

import io.pidpool.core.ring.ConsistentHashRing;
import java.io.Closeable;

/**
 * This worker's place in its group's ring. The ring is advisory: it decides which ranges a worker
 * polls, while the task table's conditional claims keep two workers whose views disagree for a
 * moment from running one task at once.
 *
 * <p>Thread-safe; listeners are called on the membership's own thread and must not block.
 */
public interface RingMembership extends Closeable {
    /** This worker's member id (the name of its ZooKeeper node). */
    String memberId();

    /** The latest ring of live members (empty before the first view arrives). */
    ConsistentHashRing ring();

    /** Registers and starts watching; returns without waiting for the first view. */
    void start();

    /** Called after every change of {@link #ring()}. */
    void addListener(Runnable listener);

    /** Leaves the ring (deletes this worker's node) and stops watching. Idempotent. */
    @Override
    void close();
}
