package io.pidpool.server.zk;

import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;

/**
 * Reads a subtree with read-only multi-ops (ZooKeeper 3.6+): each level is fetched with
 * {@code getData} + {@code getChildren} per node, a few hundred operations per request, all requests of
 * a level in flight at once. The result is a list of {@link NodeEvent}s ({@link NodeEvent.Upsert},
 * {@link NodeEvent.Listing}, {@link NodeEvent.Absent}) that the leader replays like watcher events.
 *
 * <p>A scan is not a snapshot of one instant: each node is read at some moment during the scan, and
 * its stat says which transactions it reflects. Call {@code sync()} first to read at least everything
 * committed before the scan began.
 *
 * <p>Concurrency: stateless apart from its configuration; thread-safe.
 */
public final class ZkScanner {
    /** Read operations per request: 200 nodes of ~5 KB still fit the client's 1 MB jute.maxbuffer. */
    private static final int OPS_PER_REQUEST = 200;

    private final Supplier<ZooKeeper> zooKeeper;
    private final String prefix;

    public ZkScanner(Supplier<ZooKeeper> zooKeeper, String namespace) {
        this.zooKeeper = zooKeeper;
        this.prefix = "/" + namespace;
    }

    /** Scans {@code root} and its descendants down to {@code maxDepth} levels below it. */
    public CompletableFuture<List<NodeEvent>> scan(String root, int maxDepth) {
        List<NodeEvent> events = new ArrayList<>();
        return level(List.of(root), 0, maxDepth, events).thenApply(done -> events);
    }

    /**
     * Reads just these nodes, each with its children list, in read multi-ops of
     * {@value #OPS_PER_REQUEST} operations: a targeted refresh (e.g. of a node a write found changed,
     * and its parent, whose listing proves a gone child gone), instead of a scan of the whole tree.
     */
    public CompletableFuture<List<NodeEvent>> read(List<String> paths) {
        List<CompletableFuture<List<NodeEvent>>> requests = new ArrayList<>();
        for (int from = 0; from < paths.size(); from += OPS_PER_REQUEST / 2) {
            requests.add(read(paths.subList(from, Math.min(paths.size(), from + OPS_PER_REQUEST / 2)), true));
        }
        return CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new))
                .thenApply(all -> {
                    List<NodeEvent> events = new ArrayList<>();
                    requests.forEach(r -> events.addAll(r.join()));
                    return events;
                });
    }

    /**
     * Reads just the data of these nodes (no children lists), {@value #OPS_PER_REQUEST} per read
     * multi-op: what a watcher needs after notifications about changed or created nodes. A node
     * gone meanwhile yields {@link NodeEvent.Absent}.
     */
    public CompletableFuture<List<NodeEvent>> readData(List<String> paths) {
        List<CompletableFuture<List<NodeEvent>>> requests = new ArrayList<>();
        for (int from = 0; from < paths.size(); from += OPS_PER_REQUEST) {
            requests.add(read(paths.subList(from, Math.min(paths.size(), from + OPS_PER_REQUEST)), false));
        }
        return CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new))
                .thenApply(all -> {
                    List<NodeEvent> events = new ArrayList<>();
                    requests.forEach(r -> events.addAll(r.join()));
                    return events;
                });
    }

    private CompletableFuture<Void> level(List<String> paths, int depth, int maxDepth, List<NodeEvent> events) {
        if (paths.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        boolean withChildren = depth < maxDepth;
        int perNode = withChildren ? 2 : 1;
        int nodesPerRequest = OPS_PER_REQUEST / perNode;
        List<CompletableFuture<List<NodeEvent>>> requests = new ArrayList<>();
        for (int from = 0; from < paths.size(); from += nodesPerRequest) {
            requests.add(read(paths.subList(from, Math.min(paths.size(), from + nodesPerRequest)), withChildren));
        }
        return CompletableFuture.allOf(requests.toArray(CompletableFuture[]::new))
                .thenCompose(all -> {
                    List<String> next = new ArrayList<>();
                    for (var request : requests) {
                        for (NodeEvent event : request.join()) {
                            events.add(event);
                            if (event instanceof NodeEvent.Listing listing) {
                                for (String child : listing.children()) {
                                    next.add(listing.path() + "/" + child);
                                }
                            }
                        }
                    }
                    return level(next, depth + 1, maxDepth, events);
                });
    }

    private CompletableFuture<List<NodeEvent>> read(List<String> paths, boolean withChildren) {
        var done = new CompletableFuture<List<NodeEvent>>();
        List<Op> ops = new ArrayList<>();
        for (String path : paths) {
            ops.add(Op.getData(prefix + path));
            if (withChildren) {
                ops.add(Op.getChildren(prefix + path));
            }
        }
        try {
            zooKeeper
                    .get()
                    .multi(
                            ops,
                            (rc, p, ctx, results) -> {
                                if (results == null || results.size() != ops.size()) {
                                    done.completeExceptionally(ZkErrors.translate(rc, "scan read"));
                                    return;
                                }
                                try {
                                    done.complete(toEvents(paths, withChildren, results));
                                } catch (RuntimeException e) {
                                    done.completeExceptionally(e);
                                }
                            },
                            null);
        } catch (RuntimeException e) {
            done.completeExceptionally(PidPoolException.unavailable("scan read could not be sent", e));
        }
        return done;
    }

    private static List<NodeEvent> toEvents(List<String> paths, boolean withChildren, List<OpResult> results) {
        List<NodeEvent> events = new ArrayList<>();
        int index = 0;
        for (String path : paths) {
            OpResult data = results.get(index++);
            OpResult children = withChildren ? results.get(index++) : null;
            if (data instanceof OpResult.GetDataResult got) {
                NodeStat stat = NodeStat.of(got.getStat());
                events.add(new NodeEvent.Upsert(path, got.getData(), stat));
                if (children instanceof OpResult.GetChildrenResult listed) {
                    events.add(new NodeEvent.Listing(path, listed.getChildren(), stat));
                }
            } else if (data instanceof OpResult.ErrorResult error && error.getErr() == Code.NONODE.intValue()) {
                events.add(new NodeEvent.Absent(path));
            } else if (data instanceof OpResult.ErrorResult error) {
                throw ZkErrors.translate(error.getErr(), "scan read of " + path);
            }
        }
        return events;
    }
}
