package io.pidpool.client.internal.zk;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Recipe: follows a subtree (or one node) with one persistent ZooKeeper watch and hands what it reads
 * to a {@link Listener}, reading only what its owner does not already know. It decides nothing.
 *
 * <p>One class, longer than most here, on purpose: the proof below holds only if the watch
 * registration, the scans and the bookkeeping of notifications change together under one owner, so
 * they are not split apart; its port, listener and modes are nested so that the contract reads in
 * one place, and a third of the file is that contract.
 *
 * <p>Why not Curator's {@code CuratorCache}: it reads every created or changed node again, one
 * {@code getData} request per notification, including nodes the owner itself has just written and
 * knows. Here
 *
 * <ul>
 *   <li>a notification whose zxid the owner already {@link Known#covers covers} (typically its own
 *       write, whose reply carried the new stat) is not read at all; one about a node the owner is
 *       still {@link Known#writing writing} waits until the owner reports the write {@link
 *       #writeSettled settled};
 *   <li>the other notifications that arrived together are read together, in read-only multi-ops of
 *       up to {@value #MAX_READS_PER_MULTI} {@code getData};
 *   <li>a deletion needs no read: the notification's zxid bounds the removed incarnation.
 * </ul>
 *
 * <p>ZooKeeper sends the notification of a write before the write's reply, so the check runs one
 * executor hop after the notification was taken: by then the writer's own result (queued by the reply
 * right behind the notification) has normally been applied. If not, the node is read: a wasted read,
 * never a wrong view.
 *
 * <p>Notifications are not replayed across a disconnection, so the subtree is scanned when the watch
 * is first added and again after every reconnection; the owner reports same-session reconnections
 * with {@link #reconnected()}. A scan after a reconnection may be {@link #deferRescans deferred}. As
 * with any watch, listeners must not rely on seeing every intermediate state, only on eventually
 * seeing the latest one. How registration, scans and repairs go is the {@link Mode}.
 *
 * <p><b>Listener contract.</b> Every call to the {@link Listener} and to {@link Known} runs on the
 * given executor, which must run tasks one at a time, in submission order (the owner's serial
 * executor or state thread). Promised order:
 *
 * <ul>
 *   <li>one executor task per notification, submitted from ZooKeeper's event thread in arrival
 *       order, so notifications stay in order with the owner's other tasks submitted from that
 *       thread (its own writes' replies); a deletion is handed over in that task;
 *   <li>the nodes of one read are handed over in the order the port returned them, reads in the
 *       order they were answered (which the port promises to be the order they were sent); a scan's
 *       nodes together, when the scan is answered;
 *   <li>nothing after {@link #close()} (the port's {@link Port#settled()} excepted).
 * </ul>
 *
 * A listener that throws is logged; until the next scan the view is not {@link #proveCurrent proven}.
 *
 * <p><b>Proving the owner's picture current</b> ({@link #proveCurrent}, {@link Mode#PROVABLE} only;
 * docs/leader.md §2a has the argument with the ZooKeeper source locations). The owner has every node
 * of the subtree as of a sync point if
 *
 * <ol>
 *   <li>there is a <i>base</i>: a full scan that started after the watch was registered on this
 *       ZooKeeper handle (the {@code addWatch} reply), whose nodes were all delivered, with no
 *       connection break between the registration and the scan's last reply (a transaction before
 *       the registration is in the scan; one after it is notified);
 *   <li>since the base, the handle saw no break ({@code Disconnected}, {@code Expired}, … — persistent
 *       watchers receive these state events on the handle's event thread, in order with the
 *       notifications and replies), is still the port's handle (no new session), and no read of a
 *       notified node and no delivery to the listener failed;
 *   <li>a barrier: a {@code sync} on the same handle. The server sends the notifications of every
 *       transaction it applied before the sync's reply ahead of that reply, and the client queues
 *       notifications and callbacks on one event thread in arrival order; so when the sync callback
 *       queues its marker behind them, every notification up to the sync point is in this follower's
 *       queue. The marker is passed once every read issued for earlier notifications has been
 *       delivered to the listener.
 * </ol>
 *
 * Anything else (no base yet, a break, a failed read, a timeout) answers "not proven", and the caller
 * reads the tree itself. A node the watcher's session may not read (ACL) is filtered from its
 * notifications by the server (3.9 {@code ServerCnxn.process}); a scan would fail on it instead.
 *
 * <p>Concurrency: ZooKeeper's event thread only queues notifications, submits their tasks and counts
 * state events; all other state is the executor's. {@link #start}, {@link #reconnected}, {@link
 * #writeSettled} and {@link #proveCurrent} must be called on the executor's thread ({@link
 * #proveCurrent} does the pending work itself instead of waiting for queued tasks); {@link #close()}
 * and the counters on any thread. Deferred rescans and the retry of a failed scan wait on a wall-clock
 * timer; {@link Mode#LEAN} without a rescan delay never does, so a simulation on virtual time runs it.
 *
 * @param <N> what the port's reads and scans yield per node
 */
public final class TreeFollower<N> implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TreeFollower.class);

    /** getData per read multi-op: ~200 nodes of a few KB stay far below jute.maxbuffer. */
    public static final int MAX_READS_PER_MULTI = 200;

    private static final long RESCAN_RETRY_MS = 1_000;

    /** How the follower registers its watch, scans, and repairs after a failure. */
    public enum Mode {
        /**
         * For a follower whose view must be {@link #proveCurrent provable}: the watch is added again
         * on every (re)connection (a new handle starts with no watches; the reply stamps the
         * registration), the scan waits for that reply, a failed read is repaired by a rescan and a
         * failed scan is retried after a second.
         */
        PROVABLE,
        /**
         * For a follower that never proves its view: the scan is sent right behind the watch without
         * waiting for its reply (one round trip sooner; ZooKeeper answers one session's requests in
         * order, so the scan reflects every change before the watch and later ones are notified); on
         * a reconnection the watch is added again only if it never answered OK (the client re-adds an
         * answered one itself); a failed read or scan waits for the next {@link #reconnected()}.
         */
        LEAN
    }

    /** What a persistent watch reports. */
    public enum Change {
        CREATED,
        CHANGED,
        DELETED
    }

    /** A reply's result code, on the handle's event thread. */
    @FunctionalInterface
    public interface Answer {
        void done(Code rc);
    }

    /** A persistent watch's notifications and its handle's state events, on the handle's event thread. */
    public interface Watch {
        /** {@code path} is relative to the port's namespace; {@code zxid} 0 or less when unknown. */
        void changed(Change change, String path, long zxid);

        /** A state event other than SyncConnected (Disconnected, Expired, Closed, …). */
        void broken();
    }

    /**
     * What a scan found: nodes to hand over, and the paths whose data the follower is to read itself
     * (as after notifications), e.g. the children a listing named.
     */
    public record Scan<N>(List<N> nodes, List<String> unread) {
        public Scan {
            nodes = List.copyOf(nodes);
            unread = List.copyOf(unread);
        }
    }

    /**
     * Port: the requests the follower sends on one ZooKeeper client. Paths are relative to the port's
     * namespace. A call that throws was not sent; futures and answers complete on the handle's event
     * thread, replies of one handle in the order their requests were sent.
     */
    public interface Port<N> {
        /**
         * The handle (session) requests go to now; a new one means a new session.
         *
         * @throws RuntimeException if there is none yet
         */
        Object handle();

        /** Adds a persistent watch on {@code path} ({@code recursive}: on its subtree) on {@code handle}. */
        void addWatch(Object handle, String path, boolean recursive, Watch watch, Answer added) throws Exception;

        /** Removes the watch (best effort). */
        void removeWatch(Object handle, String path, Watch watch) throws Exception;

        /** Reads {@code path} (and with {@code recursive} its subtree) on {@code handle}. */
        CompletableFuture<Scan<N>> scan(Object handle, String path, boolean recursive) throws Exception;

        /**
         * One read-only multi-op of {@code getData}, at most {@value #MAX_READS_PER_MULTI} paths, on
         * the current handle: per path what it found (an absent node included), in path order.
         */
        CompletableFuture<List<N>> read(List<String> paths) throws Exception;

        /** A {@code sync} on {@code handle}: {@link #proveCurrent} only. */
        void sync(Object handle, String path, Answer synced) throws Exception;

        /**
         * Whether a deletion notified without a zxid (a server before 3.9) is confirmed by reading the
         * parent's children ({@link #readParents}) instead of being handed over as it is.
         */
        default boolean readsParents() {
            return false;
        }

        /** The parents' data and children lists, in read multi-ops; see {@link #readsParents()}. */
        default CompletableFuture<List<N>> readParents(List<String> parents) {
            throw new UnsupportedOperationException("readParents");
        }

        /** The newest transaction a node reflects (for {@link Proof#zxid()}); 0 if unknown. */
        default long zxid(N node) {
            return 0;
        }

        /**
         * Executor: a scan or read sent through this port has been answered and what it caused handed
         * over and sent; also after {@link #close()} (owners that wait for reads in flight count here).
         */
        default void settled() {}
    }

    /** Receives what the follower reads and the deletions it is notified of; see the class comment. */
    public interface Listener<N> {
        /** A node as a read or a scan found it (absent nodes included, as the port reports them). */
        void node(N node);

        /** {@code path} was deleted by transaction {@code zxid} (0 or less: unknown). */
        void deleted(String path, long zxid);

        /** The first scan has been handed over. */
        default void initialized() {}
    }

    /** What the owner already holds. Runs on the executor. */
    @FunctionalInterface
    public interface Known {
        /** Whether the owner holds {@code path} in a state at least as new as transaction {@code zxid}. */
        boolean covers(String path, long zxid);

        /**
         * Whether a write of the owner's to {@code path} is in flight: its notification waits until the
         * owner calls {@link #writeSettled}, when the write's result is known.
         */
        default boolean writing(String path) {
            return false;
        }

        Known NOTHING = (path, zxid) -> false;
    }

    /**
     * The answer of {@link #proveCurrent}: proven (with the newest zxid the listener was handed), or
     * not, and why not.
     */
    public record Proof(boolean current, String reason, long zxid) {
        public static Proof unproven(String reason) {
            return new Proof(false, reason, 0);
        }
    }

    private record Notification(long seq, Change change, String path, long zxid) {}

    /**
     * The watch on one handle (one session): a new handle gets a new watch object, so that the state
     * events of a dead handle, delivered on its own event thread at any time, count against that
     * handle only.
     */
    private final class Generation implements Watch {
        final Object handle;
        /** State events other than SyncConnected seen on this handle's event thread. */
        final AtomicLong breaks = new AtomicLong();
        /** {@link #breaks} when an {@code addWatch} on this handle last answered OK; -1 before. Executor. */
        long registeredAt = -1;

        Generation(Object handle) {
            this.handle = handle;
        }

        @Override
        public void changed(Change change, String path, long zxid) {
            notified(change, path, zxid);
        }

        @Override
        public void broken() {
            breaks.incrementAndGet();
        }
    }

    /** A marker of {@link #proveCurrent} in the notification queue. */
    private static final class Barrier {
        final long seq;
        /** The handle's breaks when the sync answered (event thread, before the marker is queued). */
        final long breaks;
        /** The newest read batch issued before the marker passed the one-hop queue; executor. */
        long afterRead = -1;

        boolean reached;

        Barrier(long seq, long breaks) {
            this.seq = seq;
            this.breaks = breaks;
        }
    }

    /** Deletions notified without a zxid, whose parents are read (see {@link Port#readsParents()}). */
    private record Parents(List<String> paths) {}

    /** Reads in issue order; settled by whichever runs first on the executor. */
    private record ReadBatch<N>(long seq, CompletableFuture<List<N>> result, boolean sent) {}

    /** What a scan's base check compares at its end (a class: it names the inner {@link Generation}). */
    private final class ScanStart {
        final Generation gen;
        final long registeredAt;
        final long failures;

        ScanStart(Generation gen, long registeredAt, long failures) {
            this.gen = gen;
            this.registeredAt = registeredAt;
            this.failures = failures;
        }
    }

    private final Port<N> port;
    private final String path;
    private final boolean recursive;
    private final Mode mode;
    private final Predicate<String> follows;
    private final Executor executor;
    private final Listener<N> listener;
    private final Known known;
    /** {@link Notification}s and {@link Barrier}s, in the event thread's order (their seq). */
    private final Queue<Object> queue = new ConcurrentLinkedQueue<>();

    private long queuedSeq; // guarded by queue
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong notifications = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong readRequests = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong scans = new AtomicLong();
    private volatile Duration rescanDelay = Duration.ZERO;
    private volatile Generation current;

    // executor
    private boolean initialized;
    /** One scan at a time: a full scan under a flapping connection must not pile up behind others. */
    private boolean scanning;

    private boolean scanAgain;
    private boolean rescanPending;
    /** The base of the proof (class comment): its handle, that handle's breaks and {@link #failures} then. */
    private Generation base;

    private long baseBreaks;
    private long baseFailures;
    /** Failed reads of notified nodes and failed deliveries to the listener. */
    private long failures;
    /** Changed-node maps, parents to read and barriers waiting for the one hop before their reads. */
    private final ArrayDeque<Object> unread = new ArrayDeque<>();

    private final Map<String, Long> awaitingWrite = new HashMap<>();
    private boolean issueScheduled;
    private long readSeq;
    private final LinkedHashMap<Long, ReadBatch<N>> inFlight = new LinkedHashMap<>();
    private final List<Barrier> barriers = new ArrayList<>();
    /** The newest zxid handed to the listener (for the log of a proof). */
    private long newestZxid;

    /**
     * @param path the watched node (relative to the port's namespace)
     * @param recursive watch the subtree, not just the node
     * @param follows which notified paths are followed (others are ignored)
     */
    public TreeFollower(
            Port<N> port,
            String path,
            boolean recursive,
            Mode mode,
            Predicate<String> follows,
            Executor executor,
            Listener<N> listener,
            Known known) {
        this.port = port;
        this.path = path;
        this.recursive = recursive;
        this.mode = mode;
        this.follows = follows;
        this.executor = executor;
        this.listener = listener;
        this.known = known;
    }

    /**
     * Scans after a reconnection (and after a failed read) wait this long (default: none); the first
     * scan never waits. Meanwhile the watch is back and notifications are followed, but what changed
     * while disconnected is missing and {@link #proveCurrent} answers "not proven". Call before
     * {@link #start()}.
     */
    public TreeFollower<N> deferRescans(Duration delay) {
        this.rescanDelay = delay;
        return this;
    }

    /** Executor: adds the watch and scans (see {@link Mode}). */
    public void start() {
        if (closed.get()) {
            return;
        }
        Object handle;
        try {
            handle = port.handle();
        } catch (RuntimeException e) {
            log.debug("No ZooKeeper handle to watch {} on yet: {}", path, e.toString());
            return; // the next connection comes back here
        }
        Generation gen = current != null && current.handle == handle ? current : new Generation(handle);
        current = gen;
        if (addWatch(gen) && mode == Mode.LEAN) {
            scan(); // right behind the watch
        }
    }

    /** Executor: the client is connected again (on the same session or, in PROVABLE mode, a new one). */
    public void reconnected() {
        Generation gen = current;
        if (mode == Mode.LEAN && gen != null && gen.registeredAt >= 0) {
            rescanLater(); // the client re-added the watch; missed notifications are not replayed
        } else {
            start();
        }
    }

    /** Node notifications followed (created, changed, deleted). */
    public long notifications() {
        return notifications.get();
    }

    /** Nodes read after notifications (each one operation of a read multi-op). */
    public long reads() {
        return reads.get();
    }

    /** Read multi-ops sent after notifications (scans not counted). */
    public long readRequests() {
        return readRequests.get();
    }

    /** Notifications not read because the owner already covered them. */
    public long skipped() {
        return skipped.get();
    }

    /** Scans completed and handed to the listener. */
    public long scans() {
        return scans.get();
    }

    // ---------------------------------------------------------------- watch and scan (executor)

    /** Whether the addWatch was sent. */
    private boolean addWatch(Generation gen) {
        try {
            port.addWatch(gen.handle, path, recursive, gen, rc -> {
                if (rc == Code.OK) {
                    // the event thread: every break before this reply has been counted
                    long at = gen.breaks.get();
                    submit(() -> registered(gen, at));
                } else {
                    watchFailed(rc.toString());
                }
            });
            return true;
        } catch (Exception e) {
            watchFailed(e.toString());
            return false;
        }
    }

    private void watchFailed(String why) {
        if (mode == Mode.LEAN) {
            log.warn("Could not watch {} ({}); trying again on reconnection", path, why);
        } else {
            log.debug("Could not watch {} ({}); waiting for the next connection", path, why); // every one re-adds it
        }
    }

    private void registered(Generation gen, long at) {
        if (closed.get() || gen != current) {
            return;
        }
        gen.registeredAt = at;
        if (mode == Mode.LEAN) {
            return; // the scan went right behind the watch
        }
        if (initialized) {
            if (!rescanDelay.isZero()) {
                log.info("Watch on {} is back after a reconnection; rescanning in {}", path, rescanDelay);
            }
            rescanLater(); // a reconnection: the view is unproven until this scan is done
        } else {
            scan();
        }
    }

    /**
     * A scan after {@link #rescanDelay}; requests while one waits are covered by it (it starts after
     * them, hence after any registration they followed).
     */
    private void rescanLater() {
        long millis = rescanDelay.toMillis();
        if (millis <= 0) {
            scan();
            return;
        }
        if (rescanPending) {
            return;
        }
        rescanPending = true;
        CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS, this::submit)
                .execute(() -> {
                    rescanPending = false;
                    scan();
                });
    }

    private void scan() {
        Generation gen = current;
        if (closed.get() || gen == null) {
            return; // no watch yet: its registration starts the scan
        }
        if (scanning) {
            scanAgain = true; // after the one in flight: it may have read before the reconnection
            return;
        }
        var start = new ScanStart(gen, gen.registeredAt, failures);
        CompletableFuture<Scan<N>> scan;
        try {
            scan = port.scan(gen.handle, path, recursive);
        } catch (Exception e) {
            scanFailed(e);
            return;
        }
        scanning = true;
        scanAgain = false;
        scan.whenCompleteAsync((found, error) -> scanned(start, found, error), executor);
    }

    private void scanned(ScanStart start, Scan<N> found, Throwable error) {
        scanning = false;
        if (closed.get()) {
            port.settled();
            return;
        }
        if (error != null) {
            scanFailed(error);
            port.settled();
            return;
        }
        found.nodes().forEach(this::deliver);
        readPaths(found.unread(), false);
        scans.incrementAndGet();
        Generation gen = start.gen;
        // the scan's last reply came on gen's event thread: a break before it has been counted
        if (gen == current
                && start.registeredAt >= 0
                && gen.registeredAt == start.registeredAt
                && gen.breaks.get() == start.registeredAt
                && failures == start.failures) {
            base = gen;
            baseBreaks = start.registeredAt;
            baseFailures = failures;
        }
        if (!initialized) {
            initialized = true;
            listener.initialized();
        }
        port.settled();
        if (scanAgain) {
            scan();
        }
    }

    private void scanFailed(Throwable error) {
        if (mode == Mode.LEAN) {
            log.debug("Scan of {} failed ({}); the next reconnection scans again", path, error.toString());
            return;
        }
        log.warn("Scan of {} failed, retrying: {}", path, error.toString());
        CompletableFuture.delayedExecutor(RESCAN_RETRY_MS, TimeUnit.MILLISECONDS, this::submit)
                .execute(this::scan);
    }

    // ---------------------------------------------------------------- the proof

    /**
     * Whether the listener has been handed every change of the subtree committed before this call (see
     * the class comment): a barrier {@code sync} on the watch's handle, then the notifications queued
     * before its answer are taken and their reads awaited and delivered, here, on the caller's thread,
     * which must be the executor's. Blocks for at most {@code timeout}; never throws.
     */
    public Proof proveCurrent(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (closed.get()) {
            return Proof.unproven("the watcher is closed");
        }
        if (mode != Mode.PROVABLE) {
            return Proof.unproven("a " + mode + " follower proves nothing");
        }
        Generation gen = current;
        if (gen == null || gen.registeredAt < 0) {
            return Proof.unproven("the watch is not registered");
        }
        if (base != gen) {
            return Proof.unproven(
                    scanning
                            ? "the scan after the last (re)connection is still running"
                            : "no scan since the last (re)connection");
        }
        Object handle;
        try {
            handle = port.handle();
        } catch (RuntimeException e) {
            return Proof.unproven("no ZooKeeper handle");
        }
        if (handle != gen.handle) {
            return Proof.unproven("a new ZooKeeper session since the watch was registered");
        }
        if (gen.breaks.get() != baseBreaks) {
            return Proof.unproven("the connection was interrupted since the last scan");
        }
        if (failures != baseFailures) {
            return Proof.unproven("a read of notified nodes failed since the last scan");
        }
        CompletableFuture<Barrier> synced = new CompletableFuture<>();
        try {
            port.sync(handle, path, rc -> {
                // the event thread: every notification the server sent before this reply is queued
                if (rc == Code.OK) {
                    synced.complete(enqueueBarrier(gen.breaks.get()));
                } else {
                    synced.completeExceptionally(new IllegalStateException("the barrier sync failed: " + rc));
                }
            });
        } catch (Exception e) {
            return Proof.unproven("the barrier could not be sent: " + e);
        }
        Barrier barrier;
        try {
            barrier = synced.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            take(Long.MAX_VALUE);
            issueUnread();
            while (!barrier.reached) {
                if (inFlight.isEmpty()) {
                    return Proof.unproven("the barrier was not passed"); // closed meanwhile
                }
                ReadBatch<N> oldest = inFlight.values().iterator().next();
                try {
                    oldest.result().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException | CancellationException e) {
                    // settled below as a failure
                }
                settle(oldest);
            }
        } catch (TimeoutException e) {
            return Proof.unproven("the barrier or the reads before it took longer than " + timeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Proof.unproven("interrupted");
        } catch (ExecutionException e) {
            return Proof.unproven(e.getCause().getMessage());
        }
        if (barrier.breaks != baseBreaks) {
            return Proof.unproven("the connection was interrupted since the last scan");
        }
        if (failures != baseFailures || base != gen) {
            return Proof.unproven("a read of notified nodes failed since the last scan");
        }
        return new Proof(true, "", newestZxid);
    }

    // ---------------------------------------------------------------- notifications

    /** ZooKeeper's event thread: queue, and submit the task that takes it. */
    private void notified(Change change, String relative, long zxid) {
        if (relative == null || closed.get() || !follows.test(relative)) {
            return;
        }
        long seq;
        synchronized (queue) {
            seq = ++queuedSeq;
            queue.add(new Notification(seq, change, relative, zxid));
        }
        notifications.incrementAndGet();
        submit(() -> take(seq));
    }

    /** The event thread: a barrier's marker behind every notification queued so far. */
    private Barrier enqueueBarrier(long breaks) {
        Barrier barrier;
        synchronized (queue) {
            barrier = new Barrier(++queuedSeq, breaks);
            queue.add(barrier);
        }
        submit(() -> take(barrier.seq));
        return barrier;
    }

    /**
     * Executor: takes the queued items up to {@code seq} (those before it were taken by their own
     * tasks, or by {@link #proveCurrent}): deletions are handed over at once, the rest after one more
     * hop (see the class comment), together.
     */
    private void take(long seq) {
        for (Object item; (item = queue.peek()) != null && seqOf(item) <= seq; ) {
            queue.poll();
            if (closed.get()) {
                return;
            }
            if (item instanceof Barrier barrier) {
                unread.add(barrier);
                scheduleIssue();
                continue;
            }
            Notification n = (Notification) item;
            if (n.change() == Change.DELETED) {
                if (unread.peekLast() instanceof Map<?, ?> changed) {
                    changed.remove(n.path());
                }
                if (n.zxid() > 0 || !port.readsParents()) {
                    // every incarnation created before the deleting transaction is gone
                    deliverDeleted(n.path(), n.zxid());
                } else {
                    // no zxid (an old server): a listing proves it gone; read before later barriers
                    Parents parents = unread.peekLast() instanceof Parents last ? last : null;
                    if (parents == null) {
                        parents = new Parents(new ArrayList<>());
                        unread.add(parents);
                    }
                    parents.paths().add(parentOf(n.path()));
                    scheduleIssue();
                }
            } else {
                notice(n.path(), n.zxid());
            }
        }
    }

    private static long seqOf(Object item) {
        return item instanceof Barrier barrier ? barrier.seq : ((Notification) item).seq();
    }

    /** Executor: {@code path} changed by {@code zxid}; decided one hop later, with its companions. */
    @SuppressWarnings("unchecked")
    private void notice(String path, long zxid) {
        Map<String, Long> changed;
        if (unread.peekLast() instanceof Map<?, ?> last) {
            changed = (Map<String, Long>) last;
        } else {
            changed = new LinkedHashMap<>();
            unread.add(changed);
        }
        changed.merge(path, zxid, Math::max);
        scheduleIssue();
    }

    private void scheduleIssue() {
        if (!issueScheduled) {
            issueScheduled = true;
            submit(this::issueUnread);
        }
    }

    /** Executor: a write of {@code path} settled; its notification, if one waited, is decided now. */
    public void writeSettled(String path) {
        Long zxid = awaitingWrite.remove(path);
        if (zxid != null && !closed.get()) {
            notice(path, zxid);
        }
    }

    @SuppressWarnings("unchecked")
    private void issueUnread() {
        issueScheduled = false;
        for (Object item; (item = unread.poll()) != null; ) {
            if (item instanceof Barrier barrier) {
                barrier.afterRead = readSeq;
                barriers.add(barrier);
            } else if (item instanceof Parents parents) {
                track(port.readParents(parents.paths()), true);
            } else {
                readUnknown((Map<String, Long>) item);
            }
        }
        checkBarriers();
    }

    private void readUnknown(Map<String, Long> changed) {
        List<String> paths = new ArrayList<>();
        changed.forEach((p, zxid) -> {
            if (zxid > 0 && known.covers(p, zxid)) {
                skipped.incrementAndGet();
            } else if (zxid > 0 && known.writing(p)) {
                awaitingWrite.merge(p, zxid, Math::max);
            } else {
                paths.add(p);
            }
        });
        readPaths(paths, true);
    }

    /** Reads {@code paths} in read multi-ops of at most {@value #MAX_READS_PER_MULTI}. */
    private void readPaths(List<String> paths, boolean notified) {
        for (int from = 0; from < paths.size() && !closed.get(); from += MAX_READS_PER_MULTI) {
            List<String> batch = List.copyOf(paths.subList(from, Math.min(paths.size(), from + MAX_READS_PER_MULTI)));
            if (notified) {
                reads.addAndGet(batch.size());
                readRequests.incrementAndGet();
            }
            CompletableFuture<List<N>> read;
            try {
                read = port.read(batch);
            } catch (Exception e) {
                track(CompletableFuture.failedFuture(e), false);
                continue;
            }
            track(read, true);
        }
    }

    private void track(CompletableFuture<List<N>> read, boolean sent) {
        var batch = new ReadBatch<>(++readSeq, read, sent);
        inFlight.put(batch.seq(), batch);
        read.whenCompleteAsync((found, error) -> settle(batch), executor);
    }

    /** Hands a finished read to the listener, once (the executor's task or {@link #proveCurrent}, first wins). */
    private void settle(ReadBatch<N> batch) {
        if (inFlight.remove(batch.seq()) == null) {
            return;
        }
        try {
            if (closed.get()) {
                return;
            }
            List<N> found;
            try {
                found = batch.result().join();
            } catch (CompletionException | CancellationException e) {
                // connection trouble: the rescan after reconnecting (or, PROVABLE, the one below)
                // catches up; until then the view is not proven current
                failures++;
                log.debug("Reading notified nodes under {} failed: {}", path, String.valueOf(e.getCause()));
                if (mode == Mode.PROVABLE) {
                    rescanLater();
                }
                checkBarriers();
                return;
            }
            found.forEach(this::deliver);
            checkBarriers();
        } finally {
            if (batch.sent()) {
                port.settled();
            }
        }
    }

    private void checkBarriers() {
        if (barriers.isEmpty()) {
            return;
        }
        long oldest = inFlight.isEmpty()
                ? Long.MAX_VALUE
                : inFlight.keySet().iterator().next();
        barriers.removeIf(barrier -> {
            barrier.reached = barrier.afterRead < oldest;
            return barrier.reached;
        });
    }

    private void deliver(N node) {
        if (closed.get()) {
            return;
        }
        newestZxid = Math.max(newestZxid, port.zxid(node));
        try {
            listener.node(node);
        } catch (RuntimeException e) {
            failures++; // the listener may not hold it: not proven until the next scan
            log.error("Listener of {} failed on {}", path, node, e);
        }
    }

    private void deliverDeleted(String deleted, long zxid) {
        newestZxid = Math.max(newestZxid, zxid);
        try {
            listener.deleted(deleted, zxid);
        } catch (RuntimeException e) {
            failures++;
            log.error("Listener of {} failed on the deletion of {}", path, deleted, e);
        }
    }

    /** Runs on the executor unless its owner has shut it down (closing: nothing left to follow). */
    private void submit(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException e) {
            log.debug("Executor of the follower of {} is shut down; dropping a task", path);
        }
    }

    private static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    /** Any thread: no more notifications, reads or listener calls. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Generation gen = current;
        if (gen == null) {
            return;
        }
        try {
            port.removeWatch(gen.handle, path, gen);
        } catch (Exception e) {
            log.debug("Could not remove the watch on {}: {}", path, e.toString());
        }
    }
}
