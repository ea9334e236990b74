package io.pidpool.client.internal.ids;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.internal.ids.SlotNodes.Holding;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.WorkerIdRegistry;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ZooKeeper {@link WorkerIdRegistry} : a slot is the EPHEMERAL node {@code
 * /worker-ids/<n>} under the Curator namespace {@code pidpool/<cluster>}, created by this
 * participant's session, with a {@link SlotHolder} as data (owner, host, session, time).
 *
 * <pre>{@code
 * try (CuratorWorkerIdRegistry ids = CuratorWorkerIdRegistry.builder()
 *         .connectString("127.0.0.1:2181").cluster("default").build()) {
 *     WorkerSlot slot = ids.acquire(OptionalInt.empty(), lost -> stopIssuing());
 *     ...
 * }
 * }</pre>
 *
 * <p><b>Picking.</b> It reads the children of {@code /worker-ids}, asks {@link WorkerSlots#candidates}
 * (the preferred slot first; without one, the slot this registry held last; then the free ones in
 * random order) and creates nodes in that order; a create that loses a race ({@code NodeExists}) moves
 * on to the next candidate. All 32 taken: {@link WorkerSlotsExhaustedException} (retryable).
 *
 * <p><b>Loss.</b> On SUSPENDED (and LOST, and when the node is deleted under it) the {@link
 * LossListener} is told at once and {@link #current()} becomes empty. After RECONNECTED with the same
 * session the node is still this participant's, and {@link #acquire} gives it back (checked against
 * the node's {@code ephemeralOwner}). After LOST the session, and with it the node, is gone; the
 * next {@link #acquire} runs on the new session and prefers the old slot. A dead holder's slot comes
 * free when ZooKeeper expires its session.
 *
 * <p><b>Hand-over marks.</b> An ephemeral node's data dies with it, so it cannot tell the next holder
 * anything. Each slot therefore also has a PERSISTENT {@link SlotMark} {@code /worker-id-marks/<n>}:
 * the timestamp up to which the slot's holders may have issued ids. {@link #acquire} reads it right
 * after creating the slot node and <em>claims</em> it (a versioned write), so a late write of a former
 * holder fails from then on; {@link #floorMillis} returns it, and a new generator must issue only
 * after it. While holding, {@link #reserve} moves the mark (a versioned {@code multi} that also checks
 * that the slot node exists). {@link ClusterSnowflakeIds} uses this to make hand-overs independent of
 * clocks and pauses.
 *
 * <p><b>Sessions.</b> Every write that depends on "this is still my slot" (create, delete, mark) goes
 * through the ZooKeeper handle of the session that holds the slot, never through Curator's retrying
 * API: a Curator retry may land on a newer session, and a ZooKeeper handle whose session expired
 * never sends anything again. The one remaining hole is an operator deleting a live holder's node by
 * hand: its holder is told (the node is watched) but may race the next holder for a moment.
 *
 * <p><b>Curator.</b> Either the registry builds and owns a client ({@link Builder#connectString}),
 * one per participant, or it uses a started client it is given ({@link Builder#curator}) whose
 * session is then the participant's; it never closes a given client. Paths are resolved under {@code
 * pidpool/<cluster>} whatever namespace the given client has.
 *
 * <p><b>Size.</b> The node operations live in {@link SlotNodes}, the session's own handle in {@link
 * SessionHandle} and the event thread in {@link SerialEvents}; what stays here is the holding state
 * and every path that changes it (acquire, release, connection and node events, loss), kept in one
 * class so that its locking can be read in one place, and the {@link Builder} (nearly a quarter of the file).
 *
 * <p>Concurrency: {@code lock} guards the holding state; {@link #acquire} and {@link #release} hold
 * it for their ZooKeeper calls (bounded by the operation timeout and ZooKeeper's own timeouts).
 * {@code markLock} serialises {@link #reserve}, so that mark writes never wait behind an acquire.
 * Connection and node events run on one internal thread per registry ({@code worker-ids-<n>},
 * {@link SerialEvents}), which also calls the loss listeners, outside every lock.
 */
public final class CuratorWorkerIdRegistry implements WorkerIdRegistry {
    private static final Logger log = LoggerFactory.getLogger(CuratorWorkerIdRegistry.class);
    private static final AtomicInteger REGISTRIES = new AtomicInteger();

    private final CuratorFramework curator;
    private final CuratorFramework namespaced;
    private final boolean ownsCurator;
    private final ZkLayout layout;
    private final String owner;
    private final SlotNodes nodes;
    private final String slotsPath;
    private final SessionHandle session;
    private final SerialEvents events;
    private final ConnectionStateListener connectionListener;
    private final AtomicReference<Object> generator = new AtomicReference<>();

    private final Object lock = new Object();
    private final Object markLock = new Object();
    // written under lock; read without it by reserve(), current() and floorMillis()
    private volatile Holding held;
    private volatile boolean closed;
    private volatile Set<Integer> lastSeen = Set.of();
    // guarded by lock
    private final RandomGenerator random;
    private Holding suspended;
    private LossListener listener;
    private OptionalInt lastSlot = OptionalInt.empty();

    private CuratorWorkerIdRegistry(Builder b, CuratorFramework curator, boolean owns) {
        this.curator = curator;
        this.ownsCurator = owns;
        this.layout = new ZkLayout(b.cluster);
        this.namespaced = curator.usingNamespace(layout.namespace());
        this.owner = b.owner != null ? b.owner : SlotNodes.defaultOwner(b.host);
        this.random = b.random != null ? b.random : new SplittableRandom();
        this.nodes =
                new SlotNodes(layout, owner, b.host != null ? b.host : ZkSessions.localHostName(), b.clock, b.zkAuth);
        this.slotsPath = nodes.slotsPath();
        int n = REGISTRIES.incrementAndGet();
        this.session = new SessionHandle(curator, b.operationTimeout, slotsPath);
        this.events = new SerialEvents("worker-ids-" + n);
        this.connectionListener = (client, state) ->
                SerialEvents.guarded(() -> onConnectionState(state)).run();
        curator.getConnectionStateListenable().addListener(connectionListener, events.executor());
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---------------------------------------------------------------- WorkerIdRegistry

    @Override
    public String owner() {
        return owner;
    }

    @Override
    public WorkerSlot acquire(OptionalInt preferred, LossListener listener) {
        requireNonNull(preferred, "preferred");
        requireNonNull(listener, "listener");
        preferred.ifPresent(p -> requireArgument(
                p >= 0 && p < WorkerSlots.COUNT,
                "workerId",
                "preferred workerId must be within 0..%d, was %d",
                WorkerSlots.COUNT - 1,
                p));
        synchronized (lock) {
            requireState(!closed, "the worker-id registry of %s is closed", owner);
            Holding h = held;
            if (h != null) {
                this.listener = listener;
                return h.slot;
            }
            ZooKeeper zk = session.connected();
            long session = zk.getSessionId();
            Holding back = suspended;
            if (back != null) {
                // a failing read leaves it suspended, so that a later acquire can still take it back
                boolean ours = back.sessionId == session && SlotNodes.ownedBy(zk, back.nodePath, session);
                suspended = null;
                if (ours) {
                    log.info(
                            "Worker id {} is still ours on session {}",
                            back.slot.workerId(),
                            NodeText.session(session));
                    return hold(zk, back, listener);
                }
            }
            nodes.flushOrphans(zk);
            nodes.ensureParents(zk);
            OptionalInt want = preferred.isPresent() ? preferred : lastSlot;
            Set<Integer> taken = nodes.list(zk);
            lastSeen = taken;
            for (int slot : WorkerSlots.candidates(taken, want, random)) {
                Holding got = nodes.take(zk, session, slot);
                if (got != null) {
                    log.info(
                            "Worker id {} taken by {} on session {} (issue after {})",
                            slot,
                            owner,
                            NodeText.session(session),
                            got.floorMillis);
                    return hold(zk, got, listener);
                }
            }
            throw new WorkerSlotsExhaustedException(slotsPath);
        }
    }

    @Override
    public Optional<WorkerSlot> current() {
        Holding h = held;
        return h == null ? Optional.empty() : Optional.of(h.slot);
    }

    @Override
    public void release() {
        synchronized (lock) {
            Holding h = held != null ? held : suspended;
            held = null;
            suspended = null;
            listener = null;
            if (h != null) {
                log.info("Worker id {} released by {}", h.slot.workerId(), owner);
                nodes.forget(h.nodePath, h.sessionId);
            }
            ZooKeeper zk = session.current();
            if (zk != null && zk.getState().isConnected()) {
                nodes.flushOrphans(zk);
            } // else: deleted when this session reconnects, or gone with it
        }
    }

    @Override
    public Set<Integer> takenSlots() {
        if (!session.isConnected()) {
            return lastSeen;
        }
        try {
            Set<Integer> taken = SlotNodes.parse(namespaced.getChildren().forPath(layout.workerIds()));
            lastSeen = taken;
            return taken;
        } catch (KeeperException.NoNodeException e) {
            lastSeen = Set.of();
            return Set.of();
        } catch (Exception e) {
            log.debug("Could not list {}: {}", slotsPath, e.toString());
            return lastSeen;
        }
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
        curator.getConnectionStateListenable().removeListener(connectionListener);
        events.shutdown();
        if (ownsCurator) {
            curator.close();
        }
    }

    // ---------------------------------------------------------------- beyond the port

    /**
     * The timestamp (epoch milliseconds) after which ids of {@code slot} may be issued: the slot's
     * {@link SlotMark} as this participant claimed it when it took the slot ({@code -1} if the slot was
     * never held). Pass it to {@code SnowflakeIds.Builder.issueAfter}.
     *
     * @throws PidPoolException {@code ILLEGAL_STATE} unless {@code slot} is held by this participant
     */
    public long floorMillis(WorkerSlot slot) {
        Holding h = held;
        requireState(
                h != null && h.slot.equals(requireNonNull(slot, "slot")),
                "worker id %s is not held by %s",
                slot,
                owner);
        return h.floorMillis;
    }

    /**
     * Sets the slot's {@link SlotMark} to {@code untilMillis}: a promise that no id of this slot issued
     * by this participant has a later timestamp. Only the holder can write it (versioned {@code multi}
     * with a check of the slot node, on the holder's own session). A holder may also lower its own
     * mark, e.g. to its last issued timestamp before it releases the slot.
     *
     * @return {@code true} if the mark was written; {@code false} if the slot is provably not (or no
     *     longer) this participant's, or another writer moved the mark: stop issuing, then {@link
     *     #release()} and acquire again
     * @throws PidPoolException {@code UNAVAILABLE} when ZooKeeper cannot be reached now (the outcome
     *     is unknown; treat the slot as lost until {@link #acquire} confirms it)
     */
    public boolean reserve(WorkerSlot slot, long untilMillis) {
        requireNonNull(slot, "slot");
        requireArgument(untilMillis >= -1, "reservedUntil", "reservedUntil must be >= -1, was %d", untilMillis);
        synchronized (markLock) {
            Holding h = held;
            if (closed || h == null || !h.slot.equals(slot)) {
                return false;
            }
            ZooKeeper zk = session.current();
            if (zk == null || zk.getSessionId() != h.sessionId) {
                return false;
            }
            if (!zk.getState().isConnected()) {
                throw PidPoolException.unavailable("no ZooKeeper connection to reserve worker id " + slot, null);
            }
            return nodes.writeMark(zk, h, untilMillis);
        }
    }

    /**
     * Who holds which slot, read now (for operators and monitoring). Slots whose node data cannot be
     * read are left out.
     */
    public Map<Integer, SlotHolder> holders() {
        return nodes.holders(namespaced);
    }

    /** Where the slot nodes live: {@code /pidpool/<cluster>/worker-ids}. */
    public String slotsPath() {
        return slotsPath;
    }

    @Override
    public String toString() {
        return "CuratorWorkerIdRegistry[" + owner + " at " + slotsPath + "]";
    }

    /** The client this registry works on (tests need its session). */
    CuratorFramework curator() {
        return curator;
    }

    /** One {@link ClusterSnowflakeIds} at a time per registry: two would share a worker id. */
    void attach(Object user) {
        requireState(
                generator.compareAndSet(null, user),
                "the worker-id registry of %s already feeds %s; two generators would share its worker id",
                owner,
                generator.get());
    }

    void detach(Object user) {
        generator.compareAndSet(user, null);
    }

    // ---------------------------------------------------------------- taking a slot (under lock)

    private WorkerSlot hold(ZooKeeper zk, Holding h, LossListener listener) {
        held = h;
        this.listener = listener;
        lastSlot = OptionalInt.of(h.slot.workerId());
        watch(zk, h);
        return h.slot;
    }

    private void watch(ZooKeeper zk, Holding h) {
        Watcher watcher = event -> events.post(() -> onNodeEvent(h, event));
        try {
            if (zk.exists(h.nodePath, watcher) == null) {
                events.post(() -> lose(h, false, "its node " + h.nodePath + " is gone"));
            }
        } catch (KeeperException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("Could not watch {}: {}", h.nodePath, e.toString());
        }
    }

    // ---------------------------------------------------------------- events (events thread)

    private void onConnectionState(ConnectionState state) {
        switch (state) {
            case SUSPENDED, READ_ONLY -> lose(null, true, "the ZooKeeper connection is " + state);
            case LOST -> lose(null, false, "the ZooKeeper session was lost");
            case CONNECTED, RECONNECTED -> onConnected();
        }
    }

    private void onConnected() {
        synchronized (lock) {
            ZooKeeper zk = session.current();
            if (closed || zk == null || !zk.getState().isConnected()) {
                return;
            }
            if (suspended != null && suspended.sessionId != zk.getSessionId()) {
                suspended = null;
            }
            nodes.flushOrphans(zk);
        }
    }

    private void onNodeEvent(Holding h, WatchedEvent event) {
        switch (event.getType()) {
            case NodeDeleted -> lose(h, false, "its node " + h.nodePath + " was deleted");
            case NodeDataChanged, NodeCreated -> {
                Holding now = held;
                ZooKeeper zk = session.current();
                if (now == h && zk != null && zk.getSessionId() == h.sessionId) {
                    watch(zk, h); // a watch fires once; keep watching while we hold it
                }
            }
            default -> {
                // connection events reach us through Curator's connection state
            }
        }
    }

    /**
     * The slot may no longer be ours: tell the listener. {@code only}: just this holding ({@code
     * null}: whatever is held). {@code keep}: the session may still own the node (SUSPENDED), so a
     * later acquire on the same session may take it back.
     */
    private void lose(Holding only, boolean keep, String why) {
        WorkerSlot lost = null;
        LossListener tell = null;
        synchronized (lock) {
            if (closed) {
                return;
            }
            Holding h = held;
            if (only == null) {
                // A connection event may be processed late, e.g. LOST of the old session after an
                // acquire already ran on the new one. A holding of the session that is connected right
                // now was not interrupted: its node existed all along, so nobody else had the slot.
                // (Curator's flag, not the handle's state: see SessionHandle.isConnected)
                ZooKeeper zk = session.current();
                if (zk != null && session.isConnected()) {
                    long live = zk.getSessionId();
                    if (h != null && h.sessionId == live) {
                        log.debug("Ignoring a stale connection event ({}) for worker id {}", why, h.slot);
                        return;
                    }
                    if (suspended != null && suspended.sessionId == live) {
                        return;
                    }
                }
            }
            if (h != null && (only == null || only == h)) {
                held = null;
                suspended = keep ? h : null;
                tell = listener;
                listener = null;
                lost = h.slot;
            } else if (!keep && (only == null || only == suspended)) {
                suspended = null;
            }
        }
        if (lost == null) {
            return;
        }
        log.warn("Worker id {} of {} may no longer be exclusive: {}", lost.workerId(), owner, why);
        try {
            tell.onLost(lost);
        } catch (RuntimeException e) {
            log.warn("The loss listener of worker id {} failed", lost.workerId(), e);
        }
    }

    /**
     * Builds a {@link CuratorWorkerIdRegistry}. Give either {@link #curator} (a started client, shared,
     * not closed by the registry) or {@link #connectString} (the registry builds, starts and closes its
     * own client). Setters validate at once ({@code INVALID_ARGUMENT} naming the field). Not
     * thread-safe.
     */
    public static final class Builder {
        private CuratorFramework curator;
        private String connectString;
        private Duration sessionTimeout = Duration.ofSeconds(5);
        private String cluster = ZkLayout.DEFAULT_CLUSTER;
        private String owner;
        private String host;
        private Clock clock = Clock.systemUTC();
        private RandomGenerator random;
        private Duration operationTimeout = Duration.ofSeconds(10);
        private ZkAuth zkAuth = ZkAuth.none();

        private Builder() {}

        /**
         * ZooKeeper authentication and ACL (default none): an owned client authenticates with it, and
         * the slot and mark nodes are created with its ACL. With {@link #curator}, give the same one
         * the client was built with.
         */
        public Builder zkAuth(ZkAuth zkAuth) {
            this.zkAuth = requireNonNull(zkAuth, "zkAuth");
            return this;
        }

        /** A started client whose session is this participant's; the registry does not close it. */
        public Builder curator(CuratorFramework curator) {
            this.curator = requireNonNull(curator, "curator");
            return this;
        }

        /** ZooKeeper ensemble {@code host:port[,host:port...]}; the registry owns its client. */
        public Builder connectString(String connectString) {
            this.connectString = ZkSessions.requireConnectString(connectString);
            return this;
        }

        /** Session timeout to ask for, for an owned client; default 5 s. */
        public Builder sessionTimeout(Duration timeout) {
            this.sessionTimeout = ZkSessions.requireSessionTimeout(timeout);
            return this;
        }

        /** Cluster name: the slots live under {@code /pidpool/<cluster>}. Default {@code default}. */
        public Builder cluster(String cluster) {
            this.cluster = Names.requireToken(cluster, "cluster");
            return this;
        }

        /** The owner token written into the slot node; default {@code <host>-<pid>-<n>}. */
        public Builder owner(String owner) {
            this.owner = Names.requireToken(owner, "owner");
            return this;
        }

        /** Host name written into the slot node, for operators; default this machine's name. */
        public Builder host(String host) {
            requireArgument(host != null && !host.isBlank(), "host", "host must not be blank");
            this.host = host;
            return this;
        }

        /** Stamps {@link SlotHolder#acquiredAtMillis()}; default {@link Clock#systemUTC()}. */
        public Builder clock(Clock clock) {
            this.clock = requireNonNull(clock, "clock");
            return this;
        }

        /** Orders the free slots; default a new {@link SplittableRandom}. Used under the registry's lock. */
        public Builder random(RandomGenerator random) {
            this.random = requireNonNull(random, "random");
            return this;
        }

        /** How long {@link #acquire} waits for a ZooKeeper connection; default 10 s. */
        public Builder operationTimeout(Duration timeout) {
            requireArgument(
                    timeout != null && !timeout.isNegative() && !timeout.isZero(),
                    "operationTimeout",
                    "operationTimeout must be positive, was %s",
                    timeout);
            this.operationTimeout = timeout;
            return this;
        }

        public CuratorWorkerIdRegistry build() {
            requireArgument(
                    (curator == null) != (connectString == null),
                    "connectString",
                    "give exactly one of curator(...) and connectString(...)");
            if (curator != null) {
                return new CuratorWorkerIdRegistry(this, ZkSessions.requireStarted(curator), false);
            }
            CuratorFramework client = zkAuth.configure(
                            ZkSessions.clientBuilder(connectString, sessionTimeout), new ZkLayout(cluster).namespace())
                    .build();
            client.start();
            try {
                return new CuratorWorkerIdRegistry(this, client, true);
            } catch (RuntimeException e) {
                client.close();
                throw e;
            }
        }
    }
}
