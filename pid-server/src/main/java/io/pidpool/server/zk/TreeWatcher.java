package io.pidpool.server.zk;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows a subtree (or one node) with one persistent ZooKeeper watch and hands {@link NodeEvent}s to
 * a consumer (which applies them on its owner's executor). It decides nothing.
 *
 * <p>Why not Curator's {@code CuratorCache}: it reads every created or changed node again, one
 * {@code getData} request per notification, including nodes the consumer itself has just written
 * and knows. Here
 *
 * <ul>
 *   <li>a notification whose zxid the consumer already {@link Known covers} (typically its own write,
 *       whose result carried the new stat) is not read at all;
 *   <li>the other notifications that arrived together are read together, in read-only multi-ops of
 *       up to 200 {@code getData} ({@link ZkScanner#readData});
 *   <li>a deletion needs no read: the notification's zxid bounds the removed incarnation.
 * </ul>
 *
 * <p>ZooKeeper sends the notification of a write before the write's reply, so the check runs one
 * executor hop after the notification was taken: by then the writer's own result (completed by the
 * reply right behind the notification) has normally been applied. If not, the node is read: a wasted
 * read, never a wrong view.
 *
 * <p>On every (re)connection the watch is (re)added on the current handle (a new session starts with
 * no watches) and the whole subtree is scanned with read multi-ops, because notifications are not
 * replayed across a disconnection. The first scan runs at once; a scan after a reconnection may be
 * {@link #deferRescans deferred} (the watch itself is re-added at once). So, as with any watch, users
 * must not rely on seeing every intermediate state, only on eventually seeing the latest one, and
 * should re-read on a schedule.
 *
 * <p><b>Proving the consumer's picture current</b> ({@link #proveCurrent}; docs/leader.md §2a has the
 * argument with the ZooKeeper source locations). The consumer has every node of the subtree as of a
 * sync point if
 *
 * <ol>
 *   <li>there is a <i>base</i>: a full scan that started after the watch was registered on this
 *       ZooKeeper handle (the {@code addWatch} reply), whose events were all delivered, with no
 *       connection break between the registration and the scan's last reply (a transaction before
 *       the registration is in the scan; one after it is notified);
 *   <li>since the base, the handle saw no break ({@code Disconnected}, {@code Expired}, … — persistent
 *       watchers receive these state events on the handle's event thread, in order with the
 *       notifications and replies), is still the client's handle (no new session), and no read of a
 *       notified node and no delivery to the consumer failed;
 *   <li>a barrier: a {@code sync} on the same handle. The server sends the notifications of every
 *       transaction it applied before the sync's reply ahead of that reply, and the client queues
 *       notifications and callbacks on one event thread in arrival order; so when the sync callback
 *       queues its marker behind them, every notification up to the sync point is in this watcher's
 *       queue. The marker is passed once every read issued for earlier notifications has been
 *       delivered to the consumer.
 * </ol>
 *
 * Anything else (no base yet, a break, a failed read, a timeout) answers "not proven", and the caller
 * reads the tree itself. A node the watcher's session may not read (ACL) is filtered from its
 * notifications by the server (3.9 {@code ServerCnxn.process}); a scan would fail on it instead.
 *
 * <p>Concurrency: ZooKeeper's event thread only queues notifications and counts state events; the
 * consumer, {@link Known}, {@code onInitialized} and every other piece of state run on the given
 * executor, which must run tasks one at a time, in order. {@link #proveCurrent} must be called on
 * that executor's thread: it does the pending work itself instead of waiting for queued tasks.
 */
public final class TreeWatcher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TreeWatcher.class);
    private static final long RESCAN_RETRY_MS = 1_000;

    /** What the consumer already holds. Runs on the executor. */
    @FunctionalInterface
    public interface Known {
        /** Whether the consumer holds {@code path} in a state at least as new as transaction {@code zxid}. */
        boolean covers(String path, long zxid);

        Known NOTHING = (path, zxid) -> false;
    }

    /**
     * The answer of {@link #proveCurrent}: proven (with the newest zxid the consumer was handed), or
     * not, and why not.
     */
    public record Proof(boolean current, String reason, long zxid) {
        public static Proof unproven(String reason) {
            return new Proof(false, reason, 0);
        }
    }

    private record Notification(Watcher.Event.EventType type, String path, long zxid) {}

    /**
     * The watch on one ZooKeeper handle (one session): a new handle gets a new watcher object, so that
     * the state events of a dead handle, delivered on its own event thread at any time, count against
     * that handle only.
     */
    private final class Generation implements Watcher {
        final ZooKeeper zk;
        /** State events other than SyncConnected seen on this handle's event thread. */
        final AtomicLong breaks = new AtomicLong();
        /** {@link #breaks} when an {@code addWatch} on this handle last answered OK; -1 before. Executor. */
        long registeredAt = -1;
        /** Scans on this handle: a scan that ran on a newer one could not be this handle's base. */
        final ZkScanner scanner;

        Generation(ZooKeeper zk) {
            this.zk = zk;
            this.scanner = new ZkScanner(() -> zk, namespace);
        }

        @Override
        public void process(WatchedEvent event) {
            notified(this, event);
        }
    }

    /** A marker of {@link #proveCurrent} in the notification queue. */
    private static final class Barrier {
        /** The handle's breaks when the sync answered (event thread, before the marker is queued). */
        volatile long breaks;
        /** The newest read batch issued before the marker passed the one-hop queue; executor. */
        long afterRead = -1;

        boolean reached;
    }

    /** Reads issued for notifications, in issue order; settled by whichever runs first on the executor. */
    private record ReadBatch(long seq, CompletableFuture<List<NodeEvent>> result) {}

    private record ScanStart(Generation gen, long registeredAt, long failures) {}

    private final CuratorFramework client;
    private final String path;
    private final String prefix;
    private final String namespace;
    private final boolean singleNode;
    private final Executor executor;
    private final Consumer<NodeEvent> consumer;
    private final Runnable onInitialized;
    private final Known known;
    private final ZkScanner scanner;
    private final ConnectionStateListener connectionListener = this::connectionChanged;
    /** {@link Notification}s and {@link Barrier}s, in the event thread's order. */
    private final Queue<Object> queue = new ConcurrentLinkedQueue<>();

    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong notifications = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong readRequests = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private final AtomicLong scans = new AtomicLong();
    private volatile Duration rescanDelay = Duration.ZERO;
    /** Test hook: sees (and may hold back or fail) every read of notified nodes. */
    volatile UnaryOperator<CompletableFuture<List<NodeEvent>>> readHook = UnaryOperator.identity();

    // executor
    private boolean initialized;
    /** One scan at a time: a full scan under a flapping connection must not pile up behind others. */
    private boolean scanning;

    private boolean scanAgain;
    private boolean rescanPending;
    private Generation current;
    /** The base of the proof (class comment): its handle, that handle's breaks and {@link #failures} then. */
    private Generation base;

    private long baseBreaks;
    private long baseFailures;
    /** Failed reads of notified nodes and failed deliveries to the consumer. */
    private long failures;
    /** Changed-node maps and barriers waiting for the one hop before their reads are issued. */
    private final ArrayDeque<Object> unread = new ArrayDeque<>();

    private boolean issueScheduled;
    private long readSeq;
    private final LinkedHashMap<Long, ReadBatch> inFlight = new LinkedHashMap<>();
    private final List<Barrier> barriers = new ArrayList<>();
    /** The newest zxid handed to the consumer (for the log of a proof). */
    private long newestZxid;

    /**
     * @param singleNode watch only {@code path} itself, not its descendants
     * @param onInitialized runs once the first scan of the subtree has been handed to the consumer
     */
    public TreeWatcher(
            CuratorFramework client,
            String path,
            boolean singleNode,
            Executor executor,
            Consumer<NodeEvent> consumer,
            Runnable onInitialized) {
        this(client, path, singleNode, executor, consumer, onInitialized, Known.NOTHING);
    }

    /** @param known what the consumer holds already: notifications it covers are not read */
    public TreeWatcher(
            CuratorFramework client,
            String path,
            boolean singleNode,
            Executor executor,
            Consumer<NodeEvent> consumer,
            Runnable onInitialized,
            Known known) {
        this.client = client;
        this.path = path;
        String namespace = client.getNamespace();
        this.namespace = namespace == null ? "" : namespace;
        this.prefix = namespace == null || namespace.isEmpty() ? "" : "/" + namespace;
        this.singleNode = singleNode;
        this.executor = executor;
        this.consumer = consumer;
        this.onInitialized = onInitialized;
        this.known = known;
        this.scanner = new ZkScanner(() -> ZkSupport.zooKeeper(client), this.namespace);
    }

    /**
     * Scans after a reconnection (and after a failed read) wait this long (default: none); the first
     * scan never waits. Meanwhile the watch is back and notifications are followed, but what changed
     * while disconnected is missing and {@link #proveCurrent} answers "not proven". Call before
     * {@link #start()}.
     */
    public TreeWatcher deferRescans(Duration delay) {
        this.rescanDelay = delay;
        return this;
    }

    public void start() {
        client.getConnectionStateListenable().addListener(connectionListener);
        if (client.getZookeeperClient().isConnected()) {
            executor.execute(this::rewatch);
        }
    }

    /** Node notifications received (created, changed, deleted). */
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

    /** Notifications not read because the consumer already covered them. */
    public long skipped() {
        return skipped.get();
    }

    /** Full scans completed and handed to the consumer. */
    public long scans() {
        return scans.get();
    }

    // ---------------------------------------------------------------- watch and scan (executor)

    private void connectionChanged(CuratorFramework c, ConnectionState state) {
        if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
            submit(this::rewatch);
        }
    }

    private void rewatch() {
        if (closed.get()) {
            return;
        }
        ZooKeeper zk;
        try {
            zk = ZkSupport.zooKeeper(client);
        } catch (RuntimeException e) {
            log.debug("No ZooKeeper handle to watch {} on yet: {}", path, e.toString());
            return; // the next connection event comes back here
        }
        Generation gen = current != null && current.zk == zk ? current : new Generation(zk);
        current = gen;
        AddWatchMode mode = singleNode ? AddWatchMode.PERSISTENT : AddWatchMode.PERSISTENT_RECURSIVE;
        zk.addWatch(
                prefix + path,
                gen,
                mode,
                (rc, p, ctx) -> {
                    if (rc == Code.OK.intValue()) {
                        // the event thread: every break before this reply has been counted
                        long at = gen.breaks.get();
                        submit(() -> registered(gen, at));
                    } else {
                        log.debug("Could not watch {} ({}); waiting for the next connection", path, Code.get(rc));
                    }
                },
                null);
    }

    private void registered(Generation gen, long at) {
        if (closed.get() || gen != current) {
            return;
        }
        gen.registeredAt = at;
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
        if (rescanPending) {
            return;
        }
        rescanPending = true;
        Runnable task = () -> {
            rescanPending = false;
            scan();
        };
        long millis = rescanDelay.toMillis();
        if (millis <= 0) {
            submit(task);
        } else {
            CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS, this::submit)
                    .execute(task);
        }
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
        scanning = true;
        scanAgain = false;
        var start = new ScanStart(gen, gen.registeredAt, failures);
        gen.scanner
                .scan(path, singleNode ? 0 : Integer.MAX_VALUE)
                .whenCompleteAsync((events, error) -> scanned(start, events, error), executor);
    }

    private void scanned(ScanStart start, List<NodeEvent> events, Throwable error) {
        scanning = false;
        if (closed.get()) {
            return;
        }
        if (error != null) {
            log.warn("Scan of {} failed, retrying: {}", path, error.toString());
            CompletableFuture.delayedExecutor(RESCAN_RETRY_MS, TimeUnit.MILLISECONDS, this::submit)
                    .execute(this::scan);
            return;
        }
        events.forEach(this::deliver);
        scans.incrementAndGet();
        Generation gen = start.gen();
        // the scan's last reply came on gen's event thread: a break before it has been counted
        if (gen == current
                && start.registeredAt() >= 0
                && gen.registeredAt == start.registeredAt()
                && gen.breaks.get() == start.registeredAt()
                && failures == start.failures()) {
            base = gen;
            baseBreaks = start.registeredAt();
            baseFailures = failures;
        }
        if (!initialized) {
            initialized = true;
            onInitialized.run();
        }
        if (scanAgain) {
            scan();
        }
    }

    // ---------------------------------------------------------------- the proof

    /**
     * Whether the consumer has been handed every change of the subtree committed before this call (see
     * the class comment): a barrier {@code sync} on the watch's handle, then the notifications queued
     * before its answer are drained and their reads awaited and delivered, here, on the caller's
     * thread, which must be the executor's. Blocks for at most {@code timeout}; never throws.
     */
    public Proof proveCurrent(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (closed.get()) {
            return Proof.unproven("the watcher is closed");
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
        ZooKeeper zk;
        try {
            zk = ZkSupport.zooKeeper(client);
        } catch (RuntimeException e) {
            return Proof.unproven("no ZooKeeper handle");
        }
        if (zk != gen.zk) {
            return Proof.unproven("a new ZooKeeper session since the watch was registered");
        }
        if (gen.breaks.get() != baseBreaks) {
            return Proof.unproven("the connection was interrupted since the last scan");
        }
        if (failures != baseFailures) {
            return Proof.unproven("a read of notified nodes failed since the last scan");
        }
        Barrier barrier = new Barrier();
        CompletableFuture<Integer> synced = new CompletableFuture<>();
        try {
            zk.sync(
                    prefix + path,
                    (rc, p, ctx) -> {
                        // the event thread: every notification the server sent before this reply is queued
                        if (rc == Code.OK.intValue()) {
                            barrier.breaks = gen.breaks.get();
                            queue.add(barrier);
                            if (drainScheduled.compareAndSet(false, true)) {
                                submit(this::drain);
                            }
                        }
                        synced.complete(rc);
                    },
                    null);
        } catch (RuntimeException e) {
            return Proof.unproven("the barrier could not be sent: " + e);
        }
        try {
            int rc = synced.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (rc != Code.OK.intValue()) {
                return Proof.unproven("the barrier sync failed: " + Code.get(rc));
            }
            drain();
            issueUnread();
            while (!barrier.reached) {
                if (inFlight.isEmpty()) {
                    return Proof.unproven("the barrier was not passed"); // closed meanwhile
                }
                ReadBatch oldest = inFlight.values().iterator().next();
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
            return Proof.unproven("the barrier failed: " + e.getCause());
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

    /** ZooKeeper's event thread: queue, and make sure a drain runs; count state changes. */
    private void notified(Generation gen, WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None) {
            if (event.getState() != Watcher.Event.KeeperState.SyncConnected) {
                gen.breaks.incrementAndGet(); // Disconnected, Expired, Closed, AuthFailed, read-only ...
            }
            return; // reconnections come through Curator
        }
        String absolute = event.getPath();
        if (absolute == null || closed.get() || !absolute.startsWith(prefix)) {
            return;
        }
        switch (event.getType()) {
            case NodeCreated, NodeDataChanged, NodeDeleted -> {
                String relative = absolute.length() == prefix.length() ? "/" : absolute.substring(prefix.length());
                queue.add(new Notification(event.getType(), relative, event.getZxid()));
                notifications.incrementAndGet();
                if (drainScheduled.compareAndSet(false, true)) {
                    submit(this::drain);
                }
            }
            default -> {} // child lists are not watched
        }
    }

    /** Executor: deletions at once; the rest after one more hop (see the class comment), together. */
    private void drain() {
        drainScheduled.set(false);
        Map<String, Long> changed = new LinkedHashMap<>();
        List<String> parents = new ArrayList<>();
        for (Object item; (item = queue.poll()) != null; ) {
            if (closed.get()) {
                return;
            }
            if (item instanceof Barrier barrier) {
                if (!changed.isEmpty()) {
                    unread.add(changed);
                    changed = new LinkedHashMap<>();
                }
                unread.add(barrier);
                continue;
            }
            Notification n = (Notification) item;
            if (n.type() == Watcher.Event.EventType.NodeDeleted) {
                changed.remove(n.path());
                if (n.zxid() > 0) {
                    // every incarnation created before the deleting transaction is gone
                    deliver(new NodeEvent.Removed(n.path(), new NodeStat(n.zxid(), 0, 0, 0, 0, 0)));
                } else {
                    parents.add(parentOf(n.path())); // no zxid (an old server): a listing proves it gone
                }
            } else {
                changed.merge(n.path(), n.zxid(), Math::max);
            }
        }
        if (!parents.isEmpty()) {
            track(scanner.read(parents)); // issued now, so before any barrier still in the hop below
        }
        if (!changed.isEmpty()) {
            unread.add(changed);
        }
        if (!unread.isEmpty() && !issueScheduled) {
            issueScheduled = true;
            executor.execute(this::issueUnread);
        }
    }

    @SuppressWarnings("unchecked")
    private void issueUnread() {
        issueScheduled = false;
        for (Object item; (item = unread.poll()) != null; ) {
            if (item instanceof Barrier barrier) {
                barrier.afterRead = readSeq;
                barriers.add(barrier);
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
            } else {
                paths.add(p);
            }
        });
        if (paths.isEmpty() || closed.get()) {
            return;
        }
        reads.addAndGet(paths.size());
        readRequests.addAndGet((paths.size() + 199) / 200);
        track(scanner.readData(paths));
    }

    private void track(CompletableFuture<List<NodeEvent>> read) {
        var batch = new ReadBatch(++readSeq, readHook.apply(read));
        inFlight.put(batch.seq(), batch);
        batch.result().whenCompleteAsync((events, error) -> settle(batch), executor);
    }

    /** Hands a finished read to the consumer, once (the executor's task or {@link #proveCurrent}, first wins). */
    private void settle(ReadBatch batch) {
        if (inFlight.remove(batch.seq()) == null || closed.get()) {
            return;
        }
        List<NodeEvent> events;
        try {
            events = batch.result().join();
        } catch (CompletionException | CancellationException e) {
            // connection trouble: the rescan after reconnecting (or the one below) catches up; until
            // then the view is not proven current
            failures++;
            log.debug("Reading notified nodes under {} failed: {}", path, String.valueOf(e.getCause()));
            rescanLater();
            checkBarriers();
            return;
        }
        events.forEach(this::deliver);
        checkBarriers();
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

    private void deliver(NodeEvent event) {
        if (closed.get()) {
            return;
        }
        newestZxid = Math.max(newestZxid, zxidOf(event));
        try {
            consumer.accept(event);
        } catch (RuntimeException e) {
            failures++; // the consumer may not hold it: not proven until the next scan
            log.error("watcher consumer failed on {}", event, e);
        }
    }

    private static long zxidOf(NodeEvent event) {
        if (event instanceof NodeEvent.Upsert u) {
            return Math.max(u.stat().mzxid(), u.stat().pzxid());
        } else if (event instanceof NodeEvent.Removed r) {
            return r.lastStat().czxid();
        } else if (event instanceof NodeEvent.Listing l) {
            return l.stat().pzxid();
        }
        return 0;
    }

    /** Runs on the executor unless its owner has shut it down (closing: nothing left to follow). */
    private void submit(Runnable task) {
        try {
            executor.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            log.debug("Executor of the watcher on {} is shut down; dropping a task", path);
        }
    }

    private static String parentOf(String path) {
        int slash = path.lastIndexOf('/');
        return slash <= 0 ? "/" : path.substring(0, slash);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        client.getConnectionStateListenable().removeListener(connectionListener);
        Generation gen = current;
        if (gen == null) {
            return;
        }
        try {
            gen.zk.removeWatches(prefix + path, gen, Watcher.WatcherType.Any, true, (rc, p, ctx) -> {}, null);
        } catch (RuntimeException e) {
            log.debug("Could not remove the watch on {}: {}", path, e.toString());
        }
    }
}
