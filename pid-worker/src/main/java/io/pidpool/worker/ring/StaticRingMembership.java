package io.pidpool.worker.ring;

import io.pidpool.core.ring.ConsistentHashRing;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A ring set by hand, without ZooKeeper: for tests and for a single worker that owns everything.
 * {@link #set} replaces the ring and notifies listeners on the calling thread. A plain {@link
 * ConsistentHashRing} means every member runs every task type ({@link GroupRing#untyped}): each
 * worker still fetches only the types it has handlers for, but no type counts as unhandled. A
 * {@link GroupRing} sets the types per member.
 */
public final class StaticRingMembership implements RingMembership {
    private final String memberId;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
    private volatile GroupRing ring;

    public StaticRingMembership(String memberId, ConsistentHashRing ring) {
        this(memberId, GroupRing.untyped(ring));
    }

    public StaticRingMembership(String memberId, GroupRing ring) {
        this.memberId = memberId;
        this.ring = ring;
    }

    /** A ring in which {@code memberId} is the only member (it owns every slot). */
    public static StaticRingMembership alone(String memberId) {
        return new StaticRingMembership(memberId, ConsistentHashRing.of(List.of(memberId), 1));
    }

    /** Replaces the ring; every member runs every type. */
    public void set(ConsistentHashRing next) {
        set(GroupRing.untyped(next));
    }

    public void set(GroupRing next) {
        ring = next;
        listeners.forEach(Runnable::run);
    }

    @Override
    public String memberId() {
        return memberId;
    }

    @Override
    public GroupRing groupRing() {
        return ring;
    }

    @Override
    public void start() {}

    @Override
    public void addListener(Runnable listener) {
        listeners.add(listener);
    }

    @Override
    public void close() {}
}
