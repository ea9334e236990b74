package io.pidpool.client.ids;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.zk.ZkAuth;
import io.pidpool.client.zk.ZkSessions;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.WorkerIdRegistry;
import io.pidpool.core.protocol.ZkLayout;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
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
 * <p>Concurrency: {@code lock} guards the holding state; {@link #acquire} and {@link #release} hold
 * it for their ZooKeeper calls (bounded by the operation timeout and ZooKeeper's own timeouts).
 * {@code markLock} serialises {@link #reserve}, so that mark writes never wait behind an acquire.
 * Connection and node events run on one internal thread per registry ({@code worker-ids-<n>}), which
 * also calls the loss listeners, outside every lock.
 */
public final class CuratorWorkerIdRegistry implements WorkerIdRegistry {
    private static final Logger log = LoggerFactory.getLogger(CuratorWorkerIdRegistry.class);
    private static final AtomicInteger REGISTRIES = new AtomicInteger();
    private static final AtomicInteger OWNERS = new AtomicInteger();
    private static final int CLAIM_ATTEMPTS = 5;
    private static final int MAX_HOST_PREFIX = 40;

    /** A slot node created by one session, and what this participant knows about its mark. */
    private static final class Holding {
        final WorkerSlot slot;
        final long sessionId;
        final String nodePath;
        final String markPath;
        final long floorMillis;
        // guarded by markLock
        int markVersion;

        Holding(WorkerSlot slot, long sessionId, String nodePath, String markPath, long floorMillis, int markVersion) {
            this.slot = slot;
            this.sessionId = sessionId;
            this.nodePath = nodePath;
            this.markPath = markPath;
            this.floorMillis = floorMillis;
            this.markVersion = markVersion;
        }
    }

    /** A slot node that may still be ours and must be deleted when its session can reach ZooKeeper. */
    private record Orphan(String path, long sessionId) {}

    private final CuratorFramework curator;
    private final CuratorFramework namespaced;
    private final boolean ownsCurator;
    private final ZkLayout layout;
    private final String owner;
    private final String host;
    private final Clock clock;
    private final Duration operationTimeout;
    private final List<ACL> acl;
    private final ACLProvider aclProvider;
    private final String slotsPath;
    private final String marksPath;
    private final ExecutorService events;
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
    private final List<Orphan> orphans = new ArrayList<>();

    private CuratorWorkerIdRegistry(Builder b, CuratorFramework curator, boolean owns) {
        this.curator = curator;
        this.ownsCurator = owns;
        this.layout = new ZkLayout(b.cluster);
        this.namespaced = curator.usingNamespace(layout.namespace());
        this.owner = b.owner != null ? b.owner : defaultOwner(b.host);
        this.host = b.host != null ? b.host : localHostName();
        this.clock = b.clock;
        this.random = b.random != null ? b.random : new SplittableRandom();
        this.operationTimeout = b.operationTimeout;
        this.acl = b.zkAuth.acl();
        this.aclProvider = b.zkAuth.aclProvider(layout.namespace());
        this.slotsPath = full(layout.workerIds());
        this.marksPath = full(layout.workerIdMarks());
        int n = REGISTRIES.incrementAndGet();
        this.events = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "worker-ids-" + n);
            thread.setDaemon(true);
            return thread;
        });
        this.connectionListener =
                (client, state) -> guarded(() -> onConnectionState(state)).run();
        curator.getConnectionStateListenable().addListener(connectionListener, events);
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
            ZooKeeper zk = connected();
            long session = zk.getSessionId();
            Holding back = suspended;
            if (back != null) {
                // a failing read leaves it suspended, so that a later acquire can still take it back
                boolean ours = back.sessionId == session && ownedBy(zk, back.nodePath, session);
                suspended = null;
                if (ours) {
                    log.info(
                            "Worker id {} is still ours on session {}",
                            back.slot.workerId(),
                            NodeText.session(session));
                    return hold(zk, back, listener);
                }
            }
            flushOrphans(zk);
            ensureParents(zk);
            OptionalInt want = preferred.isPresent() ? preferred : lastSlot;
            for (int slot : WorkerSlots.candidates(children(zk), want, random)) {
                Holding got = take(zk, session, slot);
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
                orphans.add(new Orphan(h.nodePath, h.sessionId));
            }
            ZooKeeper zk = handle();
            if (zk != null && zk.getState().isConnected()) {
                flushOrphans(zk);
            } // else: deleted when this session reconnects, or gone with it
        }
    }

    @Override
    public Set<Integer> takenSlots() {
        if (!curator.getZookeeperClient().isConnected()) {
            return lastSeen;
        }
        try {
            Set<Integer> taken = parse(namespaced.getChildren().forPath(layout.workerIds()));
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
            ZooKeeper zk = handle();
            if (zk == null || zk.getSessionId() != h.sessionId) {
                return false;
            }
            if (!zk.getState().isConnected()) {
                throw PidPoolException.unavailable("no ZooKeeper connection to reserve worker id " + slot, null);
            }
            byte[] data = new SlotMark(untilMillis, owner, h.sessionId).encode();
            for (int attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
                try {
                    List<OpResult> results =
                            zk.multi(List.of(Op.check(h.nodePath, -1), Op.setData(h.markPath, data, h.markVersion)));
                    h.markVersion =
                            ((OpResult.SetDataResult) results.get(1)).getStat().getVersion();
                    return true;
                } catch (KeeperException.BadVersionException e) {
                    // our own earlier write whose answer was lost, or someone else's
                    Stat stat = new Stat();
                    SlotMark now = readMark(zk, h.markPath, stat);
                    if (now == null
                            || now.sessionId() != h.sessionId
                            || !now.owner().equals(owner)) {
                        log.warn(
                                "Worker id {}: its mark {} was written by someone else ({}); giving the slot up",
                                slot.workerId(),
                                h.markPath,
                                now);
                        return false;
                    }
                    h.markVersion = stat.getVersion();
                } catch (KeeperException.NoNodeException e) {
                    return false;
                } catch (KeeperException | InterruptedException e) {
                    throw failure("reserving worker id " + slot.workerId(), e);
                }
            }
            return false;
        }
    }

    /**
     * Who holds which slot, read now (for operators and monitoring). Slots whose node data cannot be
     * read are left out.
     */
    public Map<Integer, SlotHolder> holders() {
        Map<Integer, SlotHolder> holders = new TreeMap<>();
        try {
            for (int slot : parse(namespaced.getChildren().forPath(layout.workerIds()))) {
                try {
                    holders.put(slot, SlotHolder.decode(namespaced.getData().forPath(layout.workerId(slot))));
                } catch (KeeperException.NoNodeException gone) {
                    // released meanwhile
                } catch (PidPoolException malformed) {
                    log.warn("Unreadable holder data in {}: {}", full(layout.workerId(slot)), malformed.getMessage());
                }
            }
        } catch (KeeperException.NoNodeException e) {
            return Map.of();
        } catch (Exception e) {
            throw failure("listing " + slotsPath, e);
        }
        return holders;
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

    /** Creates the slot node and claims its mark; {@code null} if someone else holds the slot. */
    private Holding take(ZooKeeper zk, long session, int slot) {
        String node = full(layout.workerId(slot));
        String mark = full(layout.workerIdMark(slot));
        byte[] data = new SlotHolder(owner, host, session, clock.millis()).encode();
        try {
            zk.create(node, data, acl, CreateMode.EPHEMERAL);
        } catch (KeeperException.NodeExistsException e) {
            if (!ownedBy(zk, node, session)) {
                return null;
            }
        } catch (KeeperException.ConnectionLossException e) {
            orphans.add(new Orphan(node, session)); // it may have been created
            throw failure("creating " + node, e);
        } catch (KeeperException | InterruptedException e) {
            throw failure("creating " + node, e);
        }
        try {
            long[] claim = claimMark(zk, session, node, mark);
            return new Holding(new WorkerSlot(slot, owner), session, node, mark, claim[0], (int) claim[1]);
        } catch (PidPoolException e) {
            orphans.add(new Orphan(node, session));
            flushOrphans(zk);
            if (e.code() == ErrorCode.INVALID_ARGUMENT) {
                log.error(
                        "Worker id {} skipped: its mark {} is unreadable ({}); an operator must repair or delete"
                                + " it (it holds the last issued timestamp)",
                        slot,
                        mark,
                        e.getMessage());
                return null;
            }
            throw e;
        }
    }

    /** Reads the slot's mark and writes it back as ours: {@code {floorMillis, markVersion}}. */
    private long[] claimMark(ZooKeeper zk, long session, String node, String mark) {
        try {
            try {
                zk.create(mark, SlotMark.NONE.encode(), acl, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // the usual case: the slot was held before
            }
            for (int attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
                Stat stat = new Stat();
                SlotMark current = SlotMark.decode(zk.getData(mark, false, stat));
                SlotMark mine = new SlotMark(current.reservedUntilMillis(), owner, session);
                try {
                    List<OpResult> results =
                            zk.multi(List.of(Op.check(node, -1), Op.setData(mark, mine.encode(), stat.getVersion())));
                    int version =
                            ((OpResult.SetDataResult) results.get(1)).getStat().getVersion();
                    return new long[] {current.reservedUntilMillis(), version};
                } catch (KeeperException.BadVersionException e) {
                    // a former holder's late write landed in between: read again
                }
            }
        } catch (KeeperException | InterruptedException e) {
            throw failure("claiming " + mark, e);
        }
        throw PidPoolException.unavailable("the mark " + mark + " kept changing while it was being claimed", null);
    }

    private void watch(ZooKeeper zk, Holding h) {
        Watcher watcher = event -> post(() -> onNodeEvent(h, event));
        try {
            if (zk.exists(h.nodePath, watcher) == null) {
                post(() -> lose(h, false, "its node " + h.nodePath + " is gone"));
            }
        } catch (KeeperException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("Could not watch {}: {}", h.nodePath, e.toString());
        }
    }

    private void ensureParents(ZooKeeper zk) {
        try {
            // the ACL provider: these may be the first nodes of the cluster (even of /pidpool)
            ZKPaths.mkdirs(zk, slotsPath, true, aclProvider, false);
            ZKPaths.mkdirs(zk, marksPath, true, aclProvider, false);
        } catch (KeeperException | InterruptedException e) {
            throw failure("creating " + slotsPath, e);
        }
    }

    private Set<Integer> children(ZooKeeper zk) {
        try {
            Set<Integer> taken = parse(zk.getChildren(slotsPath, false));
            lastSeen = taken;
            return taken;
        } catch (KeeperException | InterruptedException e) {
            throw failure("listing " + slotsPath, e);
        }
    }

    /** Deletes the orphans of the current session; forgets those of other sessions (gone with them). */
    private void flushOrphans(ZooKeeper zk) {
        long session = zk.getSessionId();
        for (Iterator<Orphan> it = orphans.iterator(); it.hasNext(); ) {
            Orphan o = it.next();
            if (o.sessionId() != session) {
                it.remove();
                continue;
            }
            try {
                Stat stat = zk.exists(o.path(), false);
                if (stat != null && stat.getEphemeralOwner() == session) {
                    zk.delete(o.path(), stat.getVersion());
                }
                it.remove();
            } catch (KeeperException.NoNodeException | KeeperException.BadVersionException e) {
                it.remove();
            } catch (KeeperException | InterruptedException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                log.debug("Could not delete {} yet: {}", o.path(), e.toString());
                return;
            }
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
            ZooKeeper zk = handle();
            if (closed || zk == null || !zk.getState().isConnected()) {
                return;
            }
            if (suspended != null && suspended.sessionId != zk.getSessionId()) {
                suspended = null;
            }
            flushOrphans(zk);
        }
    }

    private void onNodeEvent(Holding h, WatchedEvent event) {
        switch (event.getType()) {
            case NodeDeleted -> lose(h, false, "its node " + h.nodePath + " was deleted");
            case NodeDataChanged, NodeCreated -> {
                Holding now = held;
                ZooKeeper zk = handle();
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
                // (Curator's flag, not the handle's state: the handle still says CONNECTED for a while
                // after a disconnect, until it starts to reconnect)
                ZooKeeper zk = handle();
                if (zk != null && curator.getZookeeperClient().isConnected()) {
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

    // ---------------------------------------------------------------- helpers

    private ZooKeeper connected() {
        try {
            if (!curator.blockUntilConnected((int) operationTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw PidPoolException.unavailable(
                        "no ZooKeeper connection within " + operationTimeout + " to take a worker id at " + slotsPath,
                        null);
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            if (!zk.getState().isConnected()) {
                throw PidPoolException.unavailable("the ZooKeeper connection dropped while taking a worker id", null);
            }
            return zk;
        } catch (PidPoolException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while waiting for ZooKeeper", e);
        } catch (Exception e) {
            throw PidPoolException.unavailable("cannot reach ZooKeeper: " + e, e);
        }
    }

    private ZooKeeper handle() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return null;
        }
    }

    private static boolean ownedBy(ZooKeeper zk, String path, long session) {
        try {
            Stat stat = zk.exists(path, false);
            return stat != null && stat.getEphemeralOwner() == session;
        } catch (KeeperException | InterruptedException e) {
            throw failure("reading " + path, e);
        }
    }

    private static SlotMark readMark(ZooKeeper zk, String path, Stat stat) {
        try {
            return SlotMark.decode(zk.getData(path, false, stat));
        } catch (PidPoolException | KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException | InterruptedException e) {
            throw failure("reading " + path, e);
        }
    }

    private static Set<Integer> parse(List<String> names) {
        Set<Integer> slots = new HashSet<>();
        for (String name : names) {
            WorkerSlots.parse(name).ifPresent(slots::add);
        }
        return Set.copyOf(slots);
    }

    private String full(String relative) {
        return ZKPaths.makePath(layout.namespace(), relative);
    }

    private void post(Runnable task) {
        try {
            events.execute(guarded(task));
        } catch (RejectedExecutionException closing) {
            log.debug("Registry closed; dropping an event");
        }
    }

    private static Runnable guarded(Runnable task) {
        return () -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.warn("Worker-id registry event failed", e);
            }
        };
    }

    static PidPoolException failure(String what, Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
            return PidPoolException.unavailable("interrupted while " + what, e);
        }
        if (e instanceof KeeperException ke) {
            return switch (ke.code()) {
                case CONNECTIONLOSS,
                        SESSIONEXPIRED,
                        SESSIONMOVED,
                        OPERATIONTIMEOUT,
                        REQUESTTIMEOUT,
                        THROTTLEDOP,
                        NOTREADONLY ->
                    PidPoolException.unavailable("ZooKeeper unavailable while " + what + ": " + ke.code(), e);
                default ->
                    new PidPoolException(
                            ErrorCode.ILLEGAL_STATE, null, "ZooKeeper refused " + what + ": " + ke.code(), e);
            };
        }
        return PidPoolException.unavailable(what + " failed: " + e, e);
    }

    static String localHostName() {
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env.strip();
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "localhost";
        }
    }

    /** {@code <host>-<pid>-<n>}: unique per registry in this JVM, readable for operators. */
    static String defaultOwner(String host) {
        String h = (host != null ? host : localHostName()).replaceAll("[^A-Za-z0-9_.-]", "-");
        if (h.length() > MAX_HOST_PREFIX) {
            h = h.substring(0, MAX_HOST_PREFIX);
        }
        h = h.replaceAll("^[.-]+", "");
        if (h.isEmpty()) {
            h = "host";
        }
        return h + "-" + ProcessHandle.current().pid() + "-" + OWNERS.incrementAndGet();
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
            requireArgument(
                    connectString != null && !connectString.isBlank() && !connectString.contains("/"),
                    "connectString",
                    "connectString must be host:port[,host:port...] without a chroot, was '%s'",
                    connectString);
            this.connectString = connectString.strip();
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
                requireArgument(
                        curator.getState() == CuratorFrameworkState.STARTED,
                        "curator",
                        "the Curator client must be started, was %s",
                        curator.getState());
                return new CuratorWorkerIdRegistry(this, curator, false);
            }
            int timeoutMs = (int) sessionTimeout.toMillis();
            CuratorFramework client = zkAuth.configure(
                            CuratorFrameworkFactory.builder()
                                    .connectString(connectString)
                                    .sessionTimeoutMs(timeoutMs)
                                    .connectionTimeoutMs(timeoutMs)
                                    .retryPolicy(new ExponentialBackoffRetry(100, 3, 1000))
                                    .ensembleTracker(false),
                            new ZkLayout(cluster).namespace())
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
