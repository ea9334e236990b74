package io.pidpool.core.fake;

import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.WorkerIdRegistry;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link WorkerIdRegistry} over an in-memory {@link Namespace} that plays {@code /worker-ids}: each
 * registry is one participant (one "session"); {@link #loseSession()} plays a session expiry and
 * {@link #suspend()} a SUSPENDED connection that later comes back with the same session.
 *
 * <p>Concurrency: the namespace's map is guarded by the namespace's monitor (a create is atomic like
 * a ZooKeeper create); a participant's own fields by its {@code lock}. Locks are taken participant
 * first, then namespace, never the other way. Listeners run on the caller's thread after the locks
 * are released.
 */
public final class InMemoryWorkerIdRegistry implements WorkerIdRegistry {
    private static final Logger log = LoggerFactory.getLogger(InMemoryWorkerIdRegistry.class);

    /** The shared directory of slot nodes: slot -> the participant whose ephemeral node it is. */
    public static final class Namespace {
        private final Map<Integer, InMemoryWorkerIdRegistry> nodes = new HashMap<>();

        public synchronized Set<Integer> taken() {
            return Set.copyOf(nodes.keySet());
        }

        synchronized boolean create(int slot, InMemoryWorkerIdRegistry session) {
            return nodes.putIfAbsent(slot, session) == null;
        }

        synchronized boolean isHeldBy(int slot, InMemoryWorkerIdRegistry session) {
            return nodes.get(slot) == session;
        }

        synchronized void deleteIfHeldBy(int slot, InMemoryWorkerIdRegistry session) {
            nodes.remove(slot, session);
        }
    }

    private final Namespace namespace;
    private final String owner;
    private final RandomGenerator random;
    private final Object lock = new Object();
    // guarded by lock
    private WorkerSlot held;
    // guarded by lock: the node we still own after a suspension, offered back on the next acquire
    private WorkerSlot suspended;
    private LossListener listener;
    private boolean closed;

    public InMemoryWorkerIdRegistry(Namespace namespace, String owner, RandomGenerator random) {
        this.namespace = requireNonNull(namespace, "namespace");
        this.owner = Names.requireToken(owner, "owner");
        this.random = requireNonNull(random, "random");
    }

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public WorkerSlot acquire(OptionalInt preferred, LossListener listener) {
        requireNonNull(preferred, "preferred");
        requireNonNull(listener, "listener");
        synchronized (lock) {
            requireState(!closed, "worker-id registry of %s is closed", owner);
            if (held != null) {
                this.listener = listener;
                return held;
            }
            if (suspended != null && namespace.isHeldBy(suspended.workerId(), this)) {
                held = suspended;
                suspended = null;
                this.listener = listener;
                return held;
            }
            for (int slot : WorkerSlots.candidates(namespace.taken(), preferred, random)) {
                if (namespace.create(slot, this)) {
                    held = new WorkerSlot(slot, owner);
                    this.listener = listener;
                    return held;
                }
            }
            throw new WorkerSlotsExhaustedException("/worker-ids");
        }
    }

    @Override
    public Optional<WorkerSlot> current() {
        synchronized (lock) {
            return Optional.ofNullable(held);
        }
    }

    @Override
    public void release() {
        synchronized (lock) {
            for (WorkerSlot slot : new WorkerSlot[] {held, suspended}) {
                if (slot != null) {
                    namespace.deleteIfHeldBy(slot.workerId(), this);
                }
            }
            held = null;
            suspended = null;
            listener = null;
        }
    }

    @Override
    public Set<Integer> takenSlots() {
        return namespace.taken();
    }

    @Override
    public void close() {
        synchronized (lock) {
            if (closed) {
                return;
            }
            release();
            closed = true;
        }
    }

    /** Plays a session expiry: the node is gone at once and the listener is told. */
    public void loseSession() {
        WorkerSlot lost;
        LossListener toTell;
        synchronized (lock) {
            lost = held;
            toTell = listener;
            for (WorkerSlot slot : new WorkerSlot[] {held, suspended}) {
                if (slot != null) {
                    namespace.deleteIfHeldBy(slot.workerId(), this);
                }
            }
            held = null;
            suspended = null;
            listener = null;
        }
        tell(toTell, lost);
    }

    /** Plays SUSPENDED: the listener is told, but the node survives for a later acquire to take back. */
    public void suspend() {
        WorkerSlot lost;
        LossListener toTell;
        synchronized (lock) {
            lost = held;
            toTell = listener;
            suspended = held;
            held = null;
            listener = null;
        }
        tell(toTell, lost);
    }

    private void tell(LossListener toTell, WorkerSlot lost) {
        if (toTell == null || lost == null) {
            return;
        }
        try {
            toTell.onLost(lost);
        } catch (RuntimeException e) {
            log.warn("worker-id loss listener of {} failed for slot {}", owner, lost.workerId(), e);
        }
    }

    @Override
    public String toString() {
        return "InMemoryWorkerIdRegistry[" + owner + "]";
    }
}
