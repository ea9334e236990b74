package io.pidpool.client.internal;

import io.pidpool.client.internal.zk.TreeFollower;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;

/**
 * One session's PID nodes, followed by a {@link TreeFollower} ({@link TreeFollower.Mode#LEAN}) on its
 * pids node, feeding {@link PidTracker}: the follower's port over {@link PidNodes}, its listener and
 * what the tracker already knows.
 *
 * <ul>
 *   <li>a notification whose zxid the tracker already covers (our own acknowledgement: its reply
 *       carried the node's new mzxid) is not read;
 *   <li>ZooKeeper sends a notification before the reply of the write that caused it, so a
 *       notification about a PID whose write is still in flight is decided when that write settles;
 *   <li>the others are read together, {@value TreeFollower#MAX_READS_PER_MULTI} {@code getData} per
 *       read multi-op, once the tasks already queued on the state thread have run;
 *   <li>a deletion needs no read; the children are listed right behind the watch and after a
 *       reconnection (notifications are not replayed), PIDs no longer listed are gone and every
 *       listed node is read again.
 * </ul>
 *
 * <p>Every read and listing counts in {@link ClientLoop#readSent} until it is settled. Concurrency:
 * the coordination's event thread only queues and posts to the state thread, which owns the rest.
 */
final class PidsWatch {
    /** What the follower hands over: a listing of the pids node, or one PID node's read. */
    sealed interface Seen {}

    record Listing(List<String> children) implements Seen {}

    record Node(String path, PidNodes.Reply reply) implements Seen {}

    private final PidNodes nodes;
    private final PidTracker tracker;
    private final ClientLoop loop;
    private final long generation;
    private final String root;
    private final TreeFollower<Seen> follower;

    /** @param root the session's pids node, as the leader named it in the instance node */
    PidsWatch(PidNodes nodes, PidTracker tracker, ClientLoop loop, long generation, String root) {
        this.nodes = nodes;
        this.tracker = tracker;
        this.loop = loop;
        this.generation = generation;
        this.root = root;
        this.follower = new TreeFollower<>(
                new Port(),
                root,
                true,
                TreeFollower.Mode.LEAN,
                path -> isPidNode(root, path),
                task -> loop.post("pids watch " + root, task),
                new Listener(),
                new TreeFollower.Known() {
                    @Override
                    public boolean covers(String path, long zxid) {
                        return tracker.covers(name(path), zxid); // seen, or written by us
                    }

                    @Override
                    public boolean writing(String path) {
                        return tracker.writing(name(path));
                    }
                });
    }

    /**
     * State thread: adds the watch and lists the children right behind it, without waiting for the
     * watch's reply (one round trip less before the share is read). If the watch fails, the listing
     * is still true, and the watch is added again on reconnection.
     */
    void start() {
        follower.start();
    }

    /** State thread: the same session is connected again. */
    void reconnected() {
        follower.reconnected();
    }

    /** State thread: a write of {@code pid} settled; its notification, if one waited, is decided now. */
    void writeSettled(String pid) {
        follower.writeSettled(root + "/" + pid);
    }

    /** Any thread: no more notifications or reads. */
    void close() {
        follower.close();
    }

    private final class Listener implements TreeFollower.Listener<Seen> {
        @Override
        public void node(Seen seen) {
            if (seen instanceof Listing listing) {
                Set<String> present = new HashSet<>(listing.children());
                for (String pid : tracker.observed()) {
                    if (!present.contains(pid)) {
                        loop.apply(tracker.onNodeDeleted(generation, pid));
                    }
                }
            } else if (seen instanceof Node node) {
                PidNodes.Reply r = node.reply();
                if (r.code() == Code.OK) {
                    loop.apply(
                            tracker.onNode(NodeView.read(generation, node.path(), r.data(), r.version(), r.mzxid())));
                } else if (r.code() == Code.NONODE) {
                    loop.apply(tracker.onNodeDeleted(generation, name(node.path())));
                }
            }
        }

        @Override
        public void deleted(String path, long zxid) {
            loop.apply(tracker.onNodeDeleted(generation, name(path)));
        }
    }

    /** The follower's requests over {@link PidNodes}, each counted while in flight. */
    private final class Port implements TreeFollower.Port<Seen> {
        @Override
        public Object handle() {
            return nodes; // a new session gets a new PidsWatch
        }

        @Override
        public void addWatch(
                Object handle, String path, boolean recursive, TreeFollower.Watch watch, TreeFollower.Answer added)
                throws Exception {
            nodes.watch(path, watch, (rc, none) -> added.done(rc));
        }

        @Override
        public void removeWatch(Object handle, String path, TreeFollower.Watch watch) throws Exception {
            nodes.unwatch(path, watch);
        }

        /** A listing: its children are read by the follower. */
        @Override
        public CompletableFuture<TreeFollower.Scan<Seen>> scan(Object handle, String path, boolean recursive)
                throws Exception {
            var listed = new CompletableFuture<TreeFollower.Scan<Seen>>();
            loop.readSent(0);
            try {
                nodes.getChildren(path, (rc, children) -> {
                    if (rc != Code.OK) {
                        listed.completeExceptionally(failure(rc));
                        return;
                    }
                    List<String> unread = new ArrayList<>(children.size());
                    children.forEach(pid -> unread.add(path + "/" + pid));
                    listed.complete(new TreeFollower.Scan<>(List.of(new Listing(children)), unread));
                });
            } catch (Exception e) {
                loop.readAnswered();
                throw e;
            }
            return listed;
        }

        @Override
        public CompletableFuture<List<Seen>> read(List<String> paths) throws Exception {
            var read = new CompletableFuture<List<Seen>>();
            loop.readSent(paths.size());
            try {
                nodes.readTogether(paths, (rc, results) -> {
                    if (results == null) {
                        read.completeExceptionally(failure(rc));
                        return;
                    }
                    List<Seen> found = new ArrayList<>(results.size());
                    for (int i = 0; i < results.size() && i < paths.size(); i++) {
                        found.add(new Node(paths.get(i), results.get(i)));
                    }
                    read.complete(found);
                });
            } catch (Exception e) {
                loop.readAnswered();
                throw e;
            }
            return read;
        }

        @Override
        public void sync(Object handle, String path, TreeFollower.Answer synced) {
            throw new UnsupportedOperationException("a LEAN follower proves nothing");
        }

        /** A read or listing settled: closing may be waiting for the last one. */
        @Override
        public void settled() {
            loop.readAnswered();
            loop.apply(List.of());
        }
    }

    private static KeeperException failure(Code rc) {
        return KeeperException.create(rc == Code.OK ? Code.SYSTEMERROR : rc);
    }

    static boolean isPidNode(String root, String path) {
        return path.length() > root.length() + 1
                && path.startsWith(root)
                && path.charAt(root.length()) == '/'
                && path.indexOf('/', root.length() + 1) < 0;
    }

    static String name(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
