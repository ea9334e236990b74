package io.pidpool.server.zk;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
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
 * replayed across a disconnection. So, as with any watch, users must not rely on seeing every
 * intermediate state, only on eventually seeing the latest one, and should re-read on a schedule.
 *
 * <p>Concurrency: ZooKeeper's event thread only queues notifications; the consumer, {@link Known}
 * and {@code onInitialized} run on the given executor, which must run tasks one at a time, in order.
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

    private record Notification(Watcher.Event.EventType type, String path, long zxid) {}

    private final CuratorFramework client;
    private final String path;
    private final String prefix;
    private final boolean singleNode;
    private final Executor executor;
    private final Consumer<NodeEvent> consumer;
    private final Runnable onInitialized;
    private final Known known;
    private final ZkScanner scanner;
    private final Watcher watcher = this::notified;
    private final ConnectionStateListener connectionListener = this::connectionChanged;
    private final Queue<Notification> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicLong notifications = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong readRequests = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    // executor
    private boolean initialized;
    /** One scan at a time: a full scan under a flapping connection must not pile up behind others. */
    private boolean scanning;

    private boolean scanAgain;

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
        this.prefix = namespace == null || namespace.isEmpty() ? "" : "/" + namespace;
        this.singleNode = singleNode;
        this.executor = executor;
        this.consumer = consumer;
        this.onInitialized = onInitialized;
        this.known = known;
        this.scanner = new ZkScanner(() -> ZkSupport.zooKeeper(client), namespace == null ? "" : namespace);
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
        AddWatchMode mode = singleNode ? AddWatchMode.PERSISTENT : AddWatchMode.PERSISTENT_RECURSIVE;
        zk.addWatch(
                prefix + path,
                watcher,
                mode,
                (rc, p, ctx) -> {
                    if (rc == Code.OK.intValue()) {
                        executor.execute(this::scan);
                    } else {
                        log.debug("Could not watch {} ({}); waiting for the next connection", path, Code.get(rc));
                    }
                },
                null);
    }

    private void scan() {
        if (closed.get()) {
            return;
        }
        if (scanning) {
            scanAgain = true; // after the one in flight: it may have read before the reconnection
            return;
        }
        scanning = true;
        scanAgain = false;
        scanner.scan(path, singleNode ? 0 : Integer.MAX_VALUE)
                .whenCompleteAsync(
                        (events, error) -> {
                            scanning = false;
                            if (closed.get()) {
                                return;
                            }
                            if (error != null) {
                                log.warn("Scan of {} failed, retrying: {}", path, error.toString());
                                CompletableFuture.delayedExecutor(RESCAN_RETRY_MS, TimeUnit.MILLISECONDS, executor)
                                        .execute(this::scan);
                                return;
                            }
                            events.forEach(this::deliver);
                            if (!initialized) {
                                initialized = true;
                                onInitialized.run();
                            }
                            if (scanAgain) {
                                scan();
                            }
                        },
                        executor);
    }

    // ---------------------------------------------------------------- notifications

    /** ZooKeeper's event thread: queue, and make sure a drain runs. */
    private void notified(WatchedEvent event) {
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
            default -> {} // connection states come through Curator; child lists are not watched
        }
    }

    /** Executor: deletions at once; the rest after one more hop (see the class comment), together. */
    private void drain() {
        drainScheduled.set(false);
        Map<String, Long> changed = new LinkedHashMap<>();
        List<String> parents = new ArrayList<>();
        for (Notification n; (n = queue.poll()) != null; ) {
            if (closed.get()) {
                return;
            }
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
            scanner.read(parents).whenCompleteAsync((events, error) -> delivered(events, error), executor);
        }
        if (!changed.isEmpty()) {
            executor.execute(() -> readUnknown(changed));
        }
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
        scanner.readData(paths).whenCompleteAsync(this::delivered, executor);
    }

    private void delivered(List<NodeEvent> events, Throwable error) {
        if (error != null) {
            // connection trouble: the rescan after reconnecting (or the owner's schedule) catches up
            log.debug("Reading notified nodes under {} failed: {}", path, error.toString());
            return;
        }
        events.forEach(this::deliver);
    }

    private void deliver(NodeEvent event) {
        if (closed.get()) {
            return;
        }
        try {
            consumer.accept(event);
        } catch (RuntimeException e) {
            log.error("watcher consumer failed on {}", event, e);
        }
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
        try {
            ZkSupport.zooKeeper(client)
                    .removeWatches(prefix + path, watcher, Watcher.WatcherType.Any, true, (rc, p, ctx) -> {}, null);
        } catch (RuntimeException e) {
            log.debug("Could not remove the watch on {}: {}", path, e.toString());
        }
    }
}
