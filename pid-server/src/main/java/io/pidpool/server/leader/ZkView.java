package io.pidpool.server.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
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

    private enum Kind {
        ROOT,
        MODULE,
        INSTANCE,
        PIDS,
        PID,
        OTHER
    }

    private record Parsed(Kind kind, ModuleKey module, InstanceId instance, String pid) {}

    private final ZkLayout layout;
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
    private final Map<String, ModuleKey> moduleKeys = new HashMap<>();

    /** Change tracking for incremental leader passes (see {@link #drainDirtyPids()}). */
    private boolean tracking;

    private final Set<String> dirtyPids = new HashSet<>();
    private long structure;
    /** The PID entry {@link #unindex} just removed, so {@link #index} can tell an ack from a move. */
    private PidEntry unindexedPid;

    public ZkView(ZkLayout layout, Ticker ticker) {
        this.layout = layout;
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
        unindexedPid = null;
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
        Parsed parsed = parse(entry.path());
        switch (parsed.kind()) {
            case INSTANCE -> {
                InstanceKey key = new InstanceKey(parsed.module(), parsed.instance());
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
                instanceChanged(key);
            }
            case PIDS -> {
                pidsNodes.computeIfAbsent(parsed.module(), k -> new TreeMap<>()).put(parsed.instance(), entry);
                structure++;
            }
            case PID -> {
                InstanceKey holder = new InstanceKey(parsed.module(), parsed.instance());
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
                if (unindexedPid == null) {
                    structure++; // a new node
                } else if (samePlacement(unindexedPid, pidEntry)) {
                    structure--; // an acknowledgement: undo the count of unindex()
                }
                unindexedPid = null;
                if (tracking) {
                    dirtyPids.add(parsed.pid());
                }
            }
            case OTHER -> report(entry.path(), "ignoring unexpected node " + entry.path());
            case ROOT, MODULE -> {}
        }
    }

    private void unindex(String path) {
        Parsed parsed = parse(path);
        switch (parsed.kind()) {
            case INSTANCE -> {
                var map = instances.get(parsed.module());
                if (map != null) {
                    map.remove(parsed.instance());
                }
                instanceChanged(new InstanceKey(parsed.module(), parsed.instance()));
            }
            case PIDS -> {
                var map = pidsNodes.get(parsed.module());
                if (map != null) {
                    map.remove(parsed.instance());
                }
                structure++;
            }
            case PID -> {
                InstanceKey holder = new InstanceKey(parsed.module(), parsed.instance());
                var map = pidNodes.get(holder);
                if (map != null) {
                    PidEntry old = map.remove(parsed.pid());
                    if (map.isEmpty()) {
                        pidNodes.remove(holder);
                    }
                    unindexedPid = old;
                    structure++; // undone by index() when the same node comes back with an equivalent state
                    if (tracking) {
                        dirtyPids.add(parsed.pid());
                    }
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

    /** An instance node came, went or changed: its PIDs' housekeeping may change (owner session). */
    private void instanceChanged(InstanceKey key) {
        structure++;
        if (tracking) {
            dirtyPids.addAll(pidNodes(key).keySet());
        }
    }

    /**
     * Whether the placement policy sees no difference between the two observations of a PID node: the
     * same owner session, and both kept without error (ADDING, ADDED, UPDATING, UPDATED) — an
     * acknowledgement such as ADDING -> ADDED, which is most of the traffic.
     */
    private static boolean samePlacement(PidEntry before, PidEntry after) {
        if (before == null || before.node() == null || after.node() == null) {
            return false;
        }
        PidNode a = before.node();
        PidNode b = after.node();
        return a.ownerSessionId() == b.ownerSessionId() && kept(a) && kept(b);
    }

    private static boolean kept(PidNode node) {
        return !node.hasError()
                && switch (node.state()) {
                    case ADDING, ADDED, UPDATING, UPDATED -> true;
                    case DELETING, DELETED -> false;
                };
    }

    private void report(String path, String message) {
        if (reported.add(path)) {
            log.warn(message);
        }
    }

    private Parsed parse(String path) {
        String root = layout.modules();
        if (path.equals(root)) {
            return new Parsed(Kind.ROOT, null, null, null);
        }
        if (!path.startsWith(root + "/")) {
            return new Parsed(Kind.OTHER, null, null, null);
        }
        String[] parts = path.substring(root.length() + 1).split("/", -1);
        try {
            ModuleKey module = moduleKeys.get(parts[0]);
            if (module == null) {
                module = ModuleKey.parse(parts[0]);
                if (moduleKeys.size() < 100_000) {
                    moduleKeys.put(parts[0], module);
                }
            }
            if (parts.length == 1) {
                return new Parsed(Kind.MODULE, module, null, null);
            }
            String child = parts[1];
            boolean pids = ZkLayout.isPidsNodeName(child);
            InstanceId instance = pids ? ZkLayout.instanceOfPidsNode(child) : InstanceId.of(child);
            if (parts.length == 2) {
                return new Parsed(pids ? Kind.PIDS : Kind.INSTANCE, module, instance, null);
            }
            if (parts.length == 3 && pids) {
                return new Parsed(Kind.PID, module, instance, Names.requirePidId(parts[2], "pid"));
            }
        } catch (PidPoolException e) {
            // a name that PidPool would never write
        }
        return new Parsed(Kind.OTHER, null, null, null);
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
        tracking = on;
        dirtyPids.clear();
    }

    /** PIDs whose nodes were created, removed or changed (or whose holder's node changed) since the last call. */
    public Set<String> drainDirtyPids() {
        if (dirtyPids.isEmpty()) {
            return Set.of();
        }
        Set<String> drained = new HashSet<>(dirtyPids);
        dirtyPids.clear();
        return drained;
    }

    /** Marks a PID for the next incremental pass (e.g. a write about it settled). */
    public void markDirty(String pid) {
        if (tracking) {
            dirtyPids.add(pid);
        }
    }

    /**
     * Counts changes that can change a placement decision: instance, pids and PID nodes appearing or
     * going, and PID nodes changing in any way other than an acknowledgement between kept states.
     */
    public long structureVersion() {
        return structure;
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
