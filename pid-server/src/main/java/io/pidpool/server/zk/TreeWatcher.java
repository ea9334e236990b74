package io.pidpool.server.zk;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.client.internal.zk.TreeFollower.Proof;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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

/**
 * Follows a subtree (or one node) of the server's Curator client and hands {@link NodeEvent}s to a
 * consumer (which applies them on its owner's executor). It decides nothing: the SDK's {@link
 * TreeFollower} recipe ({@link TreeFollower.Mode#PROVABLE}) does the following — one persistent watch,
 * notifications the consumer's {@link TreeFollower.Known} covers not read, the rest read in read
 * multi-ops, deletions without a read, rescans after reconnections, the proof of a current view;
 * this class is its port onto the raw ZooKeeper handle (scans with {@link ZkScanner}) and Curator's
 * connection events.
 *
 * <p>Concurrency: the consumer, {@code known} and {@code onInitialized} run on the given executor,
 * which must run tasks one at a time, in order; {@link #proveCurrent} must be called on its thread.
 */
public final class TreeWatcher implements AutoCloseable {
    private final CuratorFramework client;
    private final Executor executor;
    private final TreeFollower<NodeEvent> follower;
    private final Handle port;
    private final ConnectionStateListener connectionListener = this::connectionChanged;

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
        this(client, path, singleNode, executor, consumer, onInitialized, TreeFollower.Known.NOTHING);
    }

    /** @param known what the consumer holds already: notifications it covers are not read */
    public TreeWatcher(
            CuratorFramework client,
            String path,
            boolean singleNode,
            Executor executor,
            Consumer<NodeEvent> consumer,
            Runnable onInitialized,
            TreeFollower.Known known) {
        this.client = client;
        this.executor = executor;
        this.port = new Handle(client);
        TreeFollower.Listener<NodeEvent> listener = new TreeFollower.Listener<>() {
            @Override
            public void node(NodeEvent event) {
                consumer.accept(event);
            }

            @Override
            public void deleted(String path, long zxid) {
                // every incarnation created before the deleting transaction is gone
                consumer.accept(new NodeEvent.Removed(path, new NodeStat(zxid, 0, 0, 0, 0, 0)));
            }

            @Override
            public void initialized() {
                onInitialized.run();
            }
        };
        this.follower = new TreeFollower<>(
                port, path, !singleNode, TreeFollower.Mode.PROVABLE, p -> true, executor, listener, known);
    }

    /** See {@link TreeFollower#deferRescans}. */
    public TreeWatcher deferRescans(Duration delay) {
        follower.deferRescans(delay);
        return this;
    }

    public void start() {
        client.getConnectionStateListenable().addListener(connectionListener);
        if (client.getZookeeperClient().isConnected()) {
            executor.execute(follower::start);
        }
    }

    /** See {@link TreeFollower#proveCurrent}: on the executor's thread. */
    public Proof proveCurrent(Duration timeout) {
        return follower.proveCurrent(timeout);
    }

    /** Node notifications received (created, changed, deleted). */
    public long notifications() {
        return follower.notifications();
    }

    /** Nodes read after notifications (each one operation of a read multi-op). */
    public long reads() {
        return follower.reads();
    }

    /** Read multi-ops sent after notifications (scans not counted). */
    public long readRequests() {
        return follower.readRequests();
    }

    /** Notifications not read because the consumer already covered them. */
    public long skipped() {
        return follower.skipped();
    }

    /** Full scans completed and handed to the consumer. */
    public long scans() {
        return follower.scans();
    }

    /** Test hook: sees (and may hold back or fail) every read of notified nodes. */
    void readHook(UnaryOperator<CompletableFuture<List<NodeEvent>>> hook) {
        port.readHook = hook;
    }

    private void connectionChanged(CuratorFramework c, ConnectionState state) {
        if (state == ConnectionState.CONNECTED || state == ConnectionState.RECONNECTED) {
            try {
                executor.execute(follower::reconnected); // a new handle starts with no watches
            } catch (RejectedExecutionException e) {
                // the owner has shut its executor down: closing, nothing left to follow
            }
        }
    }

    @Override
    public void close() {
        client.getConnectionStateListenable().removeListener(connectionListener);
        follower.close();
    }

    /** The follower's port: the client's raw ZooKeeper handle; paths inside its namespace. */
    private static final class Handle implements TreeFollower.Port<NodeEvent> {
        private final CuratorFramework client;
        private final String namespace;
        private final String prefix;
        private final ZkScanner scanner;
        volatile UnaryOperator<CompletableFuture<List<NodeEvent>>> readHook = UnaryOperator.identity();

        Handle(CuratorFramework client) {
            this.client = client;
            String namespace = client.getNamespace();
            this.namespace = namespace == null ? "" : namespace;
            this.prefix = namespace == null || namespace.isEmpty() ? "" : "/" + namespace;
            this.scanner = new ZkScanner(() -> ZkSupport.zooKeeper(client), this.namespace);
        }

        @Override
        public Object handle() {
            return ZkSupport.zooKeeper(client);
        }

        @Override
        public void addWatch(
                Object handle, String path, boolean recursive, TreeFollower.Watch watch, TreeFollower.Answer added) {
            ((ZooKeeper) handle)
                    .addWatch(
                            prefix + path,
                            new Forward(watch, prefix),
                            recursive ? AddWatchMode.PERSISTENT_RECURSIVE : AddWatchMode.PERSISTENT,
                            (rc, p, ctx) -> added.done(Code.get(rc)),
                            null);
        }

        @Override
        public void removeWatch(Object handle, String path, TreeFollower.Watch watch) {
            ((ZooKeeper) handle)
                    .removeWatches(
                            prefix + path,
                            new Forward(watch, prefix),
                            Watcher.WatcherType.Any,
                            true,
                            (rc, p, ctx) -> {},
                            null);
        }

        /** Scans on the watch's own handle: a scan on a newer one could not be that handle's base. */
        @Override
        public CompletableFuture<TreeFollower.Scan<NodeEvent>> scan(Object handle, String path, boolean recursive) {
            return new ZkScanner(() -> (ZooKeeper) handle, namespace)
                    .scan(path, recursive ? Integer.MAX_VALUE : 0)
                    .thenApply(events -> new TreeFollower.Scan<>(events, List.of()));
        }

        @Override
        public CompletableFuture<List<NodeEvent>> read(List<String> paths) {
            return readHook.apply(scanner.readData(paths));
        }

        @Override
        public void sync(Object handle, String path, TreeFollower.Answer synced) {
            ((ZooKeeper) handle).sync(prefix + path, (rc, p, ctx) -> synced.done(Code.get(rc)), null);
        }

        /** A parent's listing shows which children are gone; the consumer orders it by its pzxid. */
        @Override
        public boolean readsParents() {
            return true;
        }

        @Override
        public CompletableFuture<List<NodeEvent>> readParents(List<String> parents) {
            return readHook.apply(scanner.read(parents));
        }

        @Override
        public long zxid(NodeEvent event) {
            if (event instanceof NodeEvent.Upsert u) {
                return Math.max(u.stat().mzxid(), u.stat().pzxid());
            } else if (event instanceof NodeEvent.Listing l) {
                return l.stat().pzxid();
            }
            return 0;
        }
    }

    /**
     * The ZooKeeper watcher of one follower watch: equal for the same watch, so adding it again on a
     * reconnection (or removing it) finds the one registered.
     */
    private record Forward(TreeFollower.Watch watch, String prefix) implements Watcher {
        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Watcher.Event.EventType.None) {
                if (event.getState() != Watcher.Event.KeeperState.SyncConnected) {
                    watch.broken(); // Disconnected, Expired, Closed, AuthFailed, read-only ...
                }
                return; // reconnections come through Curator
            }
            String absolute = event.getPath();
            if (absolute == null || !absolute.startsWith(prefix)) {
                return;
            }
            TreeFollower.Change change =
                    switch (event.getType()) {
                        case NodeCreated -> TreeFollower.Change.CREATED;
                        case NodeDataChanged -> TreeFollower.Change.CHANGED;
                        case NodeDeleted -> TreeFollower.Change.DELETED;
                        default -> null; // child lists are not watched
                    };
            if (change != null) {
                String relative = absolute.length() == prefix.length() ? "/" : absolute.substring(prefix.length());
                watch.changed(change, relative, event.getZxid());
            }
        }
    }
}
