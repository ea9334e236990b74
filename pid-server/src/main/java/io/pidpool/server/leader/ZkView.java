package io.pidpool.server.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.NodeStat;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's picture of {@code /modules}: every instance node, pids node and PID node, decoded.
 * It changes only by {@link #replay(NodeEvent)}, whatever the source of the event (the watcher, a
 * scan, or the result of the leader's own write), so rebuilding after failover is the same code path
 * as following changes.
 *
 * <p>Sources disagree about order, so every event is ordered by the ZooKeeper transaction ids in its
 * stat: a node incarnation is identified by {@code czxid}, its data by {@code mzxid}; an older
 * observation never overwrites a newer one, and a deleted incarnation leaves a tombstone so that a
 * late observation of it cannot bring it back. A scan's {@link NodeEvent.Listing} removes a child
 * only if the child was created at or before the parent's {@code pzxid} at the time of the listing,
 * i.e. only if it really was gone then.
 *
 * <p>Malformed data (a rogue client, a bug) never throws out of here: the entry is kept with its
 * problem, so the leader can treat the PID as possibly held and repair it.
 *
 * <p>What a path names is {@link ModulePath}'s to say; what changed for the leader's passes
 * (structure version, dirty PIDs) is counted by {@link ViewChanges}.
 *
 * <p>Concurrency: not thread-safe; owned by the leader's serial executor.
 */
public final class ZkView {
    private static final Logger log = LoggerFactory.getLogger(ZkView.class);

    /** A node as last observed. */
    public record Entry(String path, byte[] data, NodeStat stat) {}

    /** An instance's EPHEMERAL registration node; {@code node} is null if its data is malformed. */
    public record InstanceEntry(InstanceKey key, Entry entry, InstanceNode node, String problem) {
        public long sessionId() {
            return entry.stat().ephemeralOwner();
        }
    }

    /** A PID node; {@code node} is null if its data is malformed. */
    public record PidEntry(InstanceKey holder, String pidId, Entry entry, PidNode node, String problem) {
        public boolean malformed() {
            return node == null;
        }
    }

    private final ModulePath.Parser paths;
    private final Map<String, Entry> nodes = new HashMap<>();
    private final Map<String, Set<String>> children = new HashMap<>();
    /** Deleted incarnations: path -> czxid, and when (ticker) each was recorded. */
    private final Map<String, Long> tombstones = new HashMap<>();

    private final Map<String, Long> tombstoneTimes = new HashMap<>();
    private final Ticker ticker;
    private final Map<ModuleKey, Map<InstanceId, InstanceEntry>> instances = new TreeMap<>();
    private final Map<ModuleKey, Map<InstanceId, Entry>> pidsNodes = new TreeMap<>();
    private final Map<InstanceKey, Map<String, PidEntry>> pidNodes = new TreeMap<>();
    private final Map<String, Set<PidEntry>> byPid = new HashMap<>();
    private final Set<String> reported = new HashSet<>();
    /** Change tracking for the leader's passes (see {@link #drainDirtyPids()}). */
    private final ViewChanges changes = new ViewChanges();

    public ZkView(ZkLayout layout, Ticker ticker) {
        this.paths = new ModulePath.Parser(layout);
        this.ticker = ticker;
    }

    /** Applies one observation; stale ones are ignored. */
    public void replay(NodeEvent event) {
        if (event instanceof NodeEvent.Upsert upsert) {
            upsert(upsert);
        } else if (event instanceof NodeEvent.Removed removed) {
            remove(removed.path(), removed.lastStat().czxid());
        } else if (event instanceof NodeEvent.Listing listing) {
            Set<String> known = children.get(listing.path());
            if (known != null) {
                Set<String> present = new HashSet<>(listing.children());
                List<String> missing = new ArrayList<>();
                for (String child : known) {
                    if (!present.contains(child)) {
                        missing.add(child); // the path is built only for these (a scan lists 100,000 children)
                    }
                }
                for (String child : missing) {
                    Entry entry = nodes.get(listing.path() + "/" + child);
                    if (entry != null && entry.stat().czxid() <= listing.stat().pzxid()) {
                        remove(entry.path(), entry.stat().czxid());
                    }
                }
            }
        }
        // NodeEvent.Absent carries no zxid: it cannot prove that a node we know of is gone
    }

    private void upsert(NodeEvent.Upsert event) {
        changes.observationStarts();
        NodeStat stat = event.stat();
        Entry current = nodes.get(event.path());
        if (current != null) {
            NodeStat known = current.stat();
            boolean newer =
                    stat.czxid() > known.czxid() || (stat.czxid() == known.czxid() && stat.mzxid() > known.mzxid());
            if (!newer) {
                if (stat.czxid() == known.czxid() && stat.mzxid() == known.mzxid() && stat.pzxid() > known.pzxid()) {
                    nodes.put(event.path(), new Entry(event.path(), current.data(), stat));
                }
                return;
            }
            unindex(event.path());
        } else {
            Long deleted = tombstones.get(event.path());
            if (deleted != null && stat.czxid() <= deleted) {
                return;
            }
        }
        Entry entry = new Entry(event.path(), event.data(), stat);
        nodes.put(event.path(), entry);
        int slash = event.path().lastIndexOf('/');
        if (slash > 0) {
            children.computeIfAbsent(event.path().substring(0, slash), k -> new HashSet<>())
                    .add(event.path().substring(slash + 1));
        }
        index(entry);
    }

    private void remove(String path, long czxid) {
        Entry current = nodes.get(path);
        tombstones.merge(path, czxid, Math::max);
        tombstoneTimes.put(path, ticker.read());
        if (current == null || current.stat().czxid() > czxid) {
            return;
        }
        unindex(path);
        nodes.remove(path);
        int slash = path.lastIndexOf('/');
        if (slash > 0) {
            Set<String> siblings = children.get(path.substring(0, slash));
            if (siblings != null) {
                siblings.remove(path.substring(slash + 1));
            }
        }
    }

    private void index(Entry entry) {
        ModulePath parsed = paths.parse(entry.path());
        switch (parsed.kind()) {
            case INSTANCE -> {
                InstanceKey key = parsed.instanceKey();
                InstanceNode node = null;
                String problem = "";
                if (!entry.stat().isEphemeral()) {
                    problem = "not an ephemeral node";
                } else {
                    try {
                        node = InstanceNode.decode(entry.data());
                    } catch (PidPoolException e) {
                        problem = e.getMessage();
                    }
                }
                if (node == null) {
                    report(entry.path(), "instance node " + entry.path() + " is unusable: " + problem);
                }
                instances
                        .computeIfAbsent(parsed.module(), k -> new TreeMap<>())
                        .put(parsed.instance(), new InstanceEntry(key, entry, node, problem));
                changes.instanceChanged(pidNodes(key).keySet());
            }
            case PIDS -> {
                pidsNodes.computeIfAbsent(parsed.module(), k -> new TreeMap<>()).put(parsed.instance(), entry);
                changes.structureChanged();
            }
            case PID -> {
                InstanceKey holder = parsed.instanceKey();
                PidNode node = null;
                String problem = "";
                try {
                    node = PidNode.decode(entry.data());
                    if (!node.pidId().equals(parsed.pid())) {
                        problem = "node names PID " + node.pidId();
                        node = null;
                    }
                } catch (PidPoolException e) {
                    problem = e.getMessage();
                }
                if (node == null) {
                    report(entry.path(), "PID node " + entry.path() + " is malformed: " + problem);
                }
                var pidEntry = new PidEntry(holder, parsed.pid(), entry, node, problem);
                pidNodes.computeIfAbsent(holder, k -> new TreeMap<>()).put(parsed.pid(), pidEntry);
                byPid.computeIfAbsent(parsed.pid(), k -> new HashSet<>()).add(pidEntry);
                changes.pidIndexed(pidEntry);
            }
            case OTHER -> report(entry.path(), "ignoring unexpected node " + entry.path());
            case ROOT, MODULE -> {}
        }
    }

    private void unindex(String path) {
        ModulePath parsed = paths.parse(path);
        switch (parsed.kind()) {
            case INSTANCE -> {
                var map = instances.get(parsed.module());
                if (map != null) {
                    map.remove(parsed.instance());
                }
                InstanceKey key = parsed.instanceKey();
                changes.instanceChanged(pidNodes(key).keySet());
            }
            case PIDS -> {
                var map = pidsNodes.get(parsed.module());
                if (map != null) {
                    map.remove(parsed.instance());
                }
                changes.structureChanged();
            }
            case PID -> {
                InstanceKey holder = parsed.instanceKey();
                var map = pidNodes.get(holder);
                if (map != null) {
                    PidEntry old = map.remove(parsed.pid());
                    if (map.isEmpty()) {
                        pidNodes.remove(holder);
                    }
                    changes.pidUnindexed(parsed.pid(), old);
                    if (old != null) {
                        Set<PidEntry> set = byPid.get(parsed.pid());
                        if (set != null) {
                            set.remove(old);
                            if (set.isEmpty()) {
                                byPid.remove(parsed.pid());
                            }
                        }
                    }
                }
            }
            case ROOT, MODULE, OTHER -> {}
        }
        reported.remove(path);
    }

    private void report(String path, String message) {
        if (reported.add(path)) {
            log.warn(message);
        }
    }

    // ---- queries ----

    /** Modules that have a node under {@code /modules}. */
    public Set<ModuleKey> modules() {
        Set<ModuleKey> result = new TreeSet<>(instances.keySet());
        result.addAll(pidsNodes.keySet());
        for (InstanceKey key : pidNodes.keySet()) {
            result.add(key.module());
        }
        return result;
    }

    /** Registration nodes present in the module, usable or not. */
    public Map<InstanceId, InstanceEntry> instances(ModuleKey module) {
        return instances.getOrDefault(module, Map.of());
    }

    public Map<InstanceId, Entry> pidsNodes(ModuleKey module) {
        return pidsNodes.getOrDefault(module, Map.of());
    }

    /** PID nodes under the instance's pids node. */
    public Map<String, PidEntry> pidNodes(InstanceKey holder) {
        return pidNodes.getOrDefault(holder, Map.of());
    }

    /** Every node of this PID anywhere in the tree (normally zero or one). */
    public Collection<PidEntry> nodesOf(String pidId) {
        Set<PidEntry> set = byPid.get(pidId);
        return set == null ? List.of() : set;
    }

    /** Every PID node in the tree. */
    public List<PidEntry> allPidNodes() {
        List<PidEntry> all = new ArrayList<>();
        for (var map : pidNodes.values()) {
            all.addAll(map.values());
        }
        return all;
    }

    /** Instances that have PID nodes (live or not). */
    public Set<InstanceKey> holderKeys() {
        return pidNodes.keySet();
    }

    /**
     * Starts (or stops) recording which PIDs changed, for a leader's incremental passes. Off on
     * followers, so nothing accumulates there; turning it on or off forgets what was recorded.
     */
    public void trackChanges(boolean on) {
        changes.track(on);
    }

    /** PIDs whose nodes were created, removed or changed (or whose holder's node changed) since the last call. */
    public Set<String> drainDirtyPids() {
        return changes.drainDirtyPids();
    }

    /** Marks a PID for the next incremental pass (e.g. a write about it settled). */
    public void markDirty(String pid) {
        changes.markDirty(pid);
    }

    /**
     * Counts changes that can change a placement decision: instance, pids and PID nodes appearing or
     * going, and PID nodes changing in any way other than an acknowledgement between kept states.
     */
    public long structureVersion() {
        return changes.structureVersion();
    }

    public Entry node(String path) {
        return nodes.get(path);
    }

    public int size() {
        return nodes.size();
    }

    /**
     * Forgets tombstones recorded more than {@code age} ago, to bound memory. A stale observation of a
     * deleted node can only be a watcher event or a scan result older than that; callers pass an age
     * far above any such delay (minutes).
     */
    public void pruneTombstones(java.time.Duration age) {
        long now = ticker.read();
        long limit = age.toNanos();
        tombstoneTimes.entrySet().removeIf(e -> {
            boolean old = now - e.getValue() > limit;
            if (old) {
                tombstones.remove(e.getKey());
            }
            return old;
        });
    }

    public int tombstones() {
        return tombstones.size();
    }
}
