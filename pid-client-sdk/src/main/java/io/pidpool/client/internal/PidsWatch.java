package io.pidpool.client.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One session's PID nodes, followed with one persistent recursive watch on its pids node (not
 * Curator's {@code CuratorCache}, which reads every notified node again, the client's own
 * acknowledgements included), feeding {@link PidTracker}.
 *
 * <ul>
 *   <li>a notification whose zxid the tracker already covers (our own acknowledgement: its reply
 *       carried the node's new mzxid) is not read;
 *   <li>ZooKeeper sends a notification before the reply of the write that caused it, so a
 *       notification about a PID whose write is still in flight is decided when that write settles;
 *   <li>the others are read together, {@value #MAX_READS_PER_MULTI} {@code getData} per read
 *       multi-op, once the tasks already queued on the state thread have run;
 *   <li>a deletion needs no read; after a reconnection (notifications are not replayed) the
 *       children are listed and every node read again.
 * </ul>
 *
 * <p>Concurrency: the coordination's event thread only posts to the state thread, which owns the rest.
 */
final class PidsWatch implements PidNodes.Watch {
    private static final Logger log = LoggerFactory.getLogger(PidsWatch.class);

    /** getData per read multi-op: ~200 nodes of a few KB stay far below jute.maxbuffer. */
    static final int MAX_READS_PER_MULTI = 200;

    private final PidNodes nodes;
    private final PidTracker tracker;
    private final ClientLoop loop;
    private final long generation;
    private final String root;
    private volatile boolean closed;
    // state thread
    private final Map<String, Long> noticed = new LinkedHashMap<>();
    private final Map<String, Long> awaitingWrite = new HashMap<>();
    private boolean readPosted;
    private boolean watching;

    /** @param root the session's pids node, as the leader named it in the instance node */
    PidsWatch(PidNodes nodes, PidTracker tracker, ClientLoop loop, long generation, String root) {
        this.nodes = nodes;
        this.tracker = tracker;
        this.loop = loop;
        this.generation = generation;
        this.root = root;
    }

    /**
     * State thread: adds the watch and lists the children right behind it, without waiting for the
     * watch's reply (one round trip less before the share is read). ZooKeeper answers one session's
     * requests in order, so the listing reflects every change made before the watch was in place;
     * later ones are notified. If the watch fails, the listing is still true, and the watch is added
     * again on reconnection as before.
     */
    void start() {
        if (closed) {
            return;
        }
        loop.readSent(0);
        try {
            nodes.watchAndList(
                    root,
                    this,
                    (rc, none) -> {
                        if (rc == Code.OK) {
                            loop.post("watching " + root, () -> watching = true);
                        } else {
                            log.warn("Could not watch {} ({}); trying again on reconnection", root, rc);
                        }
                    },
                    this::listed);
        } catch (Exception e) {
            loop.readAnswered();
            log.warn("Could not watch {} ({}); trying again on reconnection", root, e.toString());
        }
    }

    /** State thread: the same session is connected again. */
    void reconnected() {
        if (watching) {
            rescan(); // the watch is back (the ZooKeeper client re-adds it), missed notifications are not
        } else {
            start();
        }
    }

    /** Coordination event thread. */
    @Override
    public void changed(PidNodes.Change change, String path, long zxid) {
        if (closed || !isPidNode(root, path)) {
            return;
        }
        String pid = name(path);
        switch (change) {
            case CREATED, CHANGED -> loop.post("notice " + pid, () -> notice(pid, zxid));
            case DELETED ->
                loop.post("deleted " + pid, () -> {
                    noticed.remove(pid);
                    loop.apply(tracker.onNodeDeleted(generation, pid));
                });
        }
    }

    private void notice(String pid, long zxid) {
        if (closed) {
            return;
        }
        noticed.merge(pid, zxid, Math::max);
        if (!readPosted) {
            readPosted = true;
            loop.post("readNoticed", this::readNoticed);
        }
    }

    private void readNoticed() {
        readPosted = false;
        List<String> due = new ArrayList<>();
        noticed.forEach((pid, zxid) -> {
            if (zxid > 0 && tracker.covers(pid, zxid)) {
                return; // seen, or written by us
            }
            if (zxid > 0 && tracker.writing(pid)) {
                awaitingWrite.merge(pid, zxid, Math::max);
            } else {
                due.add(pid);
            }
        });
        noticed.clear();
        read(due);
    }

    /** State thread: a write of {@code pid} settled; its notification, if one waited, is decided now. */
    void writeSettled(String pid) {
        Long zxid = awaitingWrite.remove(pid);
        if (zxid != null) {
            notice(pid, zxid);
        }
    }

    /** State thread: after (re)connecting: list the children, forget the gone, read the rest. */
    void rescan() {
        if (closed) {
            return;
        }
        loop.readSent(0);
        try {
            nodes.getChildren(root, this::listed);
        } catch (Exception e) {
            loop.readAnswered();
            log.warn("Could not list {}: {}", root, e.toString());
        }
    }

    /** Coordination event thread: a listing's answer. */
    private void listed(Code rc, List<String> children) {
        loop.post("listing " + root, () -> {
            loop.readAnswered();
            if (closed) {
                loop.apply(List.of());
                return;
            }
            if (rc == Code.OK) {
                Set<String> present = new HashSet<>(children);
                for (String pid : tracker.observed()) {
                    if (!present.contains(pid)) {
                        loop.apply(tracker.onNodeDeleted(generation, pid));
                    }
                }
                read(children);
            } else {
                log.debug("Listing {} failed ({}); the next reconnection lists again", root, rc);
            }
            loop.apply(List.of());
        });
    }

    private void read(List<String> pids) {
        for (int from = 0; from < pids.size() && !closed; from += MAX_READS_PER_MULTI) {
            List<String> batch = List.copyOf(pids.subList(from, Math.min(pids.size(), from + MAX_READS_PER_MULTI)));
            List<String> paths = new ArrayList<>(batch.size());
            batch.forEach(pid -> paths.add(root + "/" + pid));
            loop.readSent(batch.size());
            try {
                nodes.readTogether(paths, (rc, results) -> loop.post("read", () -> onRead(batch, results)));
            } catch (Exception e) {
                loop.readAnswered();
                log.warn("Could not read {} PID nodes: {}", batch.size(), e.toString());
            }
        }
    }

    private void onRead(List<String> batch, List<PidNodes.Reply> results) {
        loop.readAnswered();
        for (int i = 0; results != null && i < results.size() && i < batch.size() && !closed; i++) {
            String path = root + "/" + batch.get(i);
            PidNodes.Reply r = results.get(i);
            if (r.code() == Code.OK) {
                loop.apply(tracker.onNode(NodeView.read(generation, path, r.data(), r.version(), r.mzxid())));
            } else if (r.code() == Code.NONODE) {
                loop.apply(tracker.onNodeDeleted(generation, batch.get(i)));
            }
        }
        // a failed read (connection loss) is repeated by the rescan after reconnecting
        loop.apply(List.of());
    }

    /** Any thread: no more notifications or reads. */
    void close() {
        closed = true;
        try {
            nodes.unwatch(root, this);
        } catch (Exception e) {
            log.debug("Could not remove the watch on {}: {}", root, e.toString());
        }
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
