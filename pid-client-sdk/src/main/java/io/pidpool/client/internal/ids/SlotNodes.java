package io.pidpool.client.internal.ids;

import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slot nodes ({@code /worker-ids/<n>}, EPHEMERAL, a {@link SlotHolder} as data) and mark nodes
 * ({@code /worker-id-marks/<n>}, a {@link SlotMark}) of one {@link CuratorWorkerIdRegistry}: taking a
 * slot and claiming its mark, moving the mark, and deleting nodes a session may have left behind.
 *
 * <p>Every write goes through the ZooKeeper handle of the session that holds (or takes) the slot,
 * never through Curator's retrying API: a retry may land on a newer session, while a handle whose
 * session expired never sends anything again.
 *
 * <p>Concurrency: not thread-safe. The registry calls {@link #take}, {@link #flushOrphans} and {@link
 * #forget} under its lock and {@link #writeMark} under its mark lock; the rest only reads.
 */
final class SlotNodes {
    private static final Logger log = LoggerFactory.getLogger(SlotNodes.class);
    private static final int CLAIM_ATTEMPTS = 5;
    private static final int MAX_HOST_PREFIX = 40;
    private static final AtomicInteger OWNERS = new AtomicInteger();

    /** A slot node created by one session, and what this participant knows about its mark. */
    static final class Holding {
        final WorkerSlot slot;
        final long sessionId;
        final String nodePath;
        final String markPath;
        final long floorMillis;
        // guarded by the registry's mark lock
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

    private final ZkLayout layout;
    private final String owner;
    private final String host;
    private final Clock clock;
    private final List<ACL> acl;
    private final ACLProvider aclProvider;
    private final String slotsPath;
    private final String marksPath;
    private final List<Orphan> orphans = new ArrayList<>();

    SlotNodes(ZkLayout layout, String owner, String host, Clock clock, ZkAuth auth) {
        this.layout = layout;
        this.owner = owner;
        this.host = host;
        this.clock = clock;
        this.acl = auth.acl();
        this.aclProvider = auth.aclProvider(layout.namespace());
        this.slotsPath = full(layout.workerIds());
        this.marksPath = full(layout.workerIdMarks());
    }

    /** {@code /pidpool/<cluster>/worker-ids}. */
    String slotsPath() {
        return slotsPath;
    }

    /** Creates the slot node and claims its mark; {@code null} if someone else holds the slot. */
    Holding take(ZooKeeper zk, long session, int slot) {
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

    /**
     * Moves the holding's mark to {@code untilMillis} (a versioned {@code multi} with a check of its
     * slot node, on the holding's own session {@code zk}).
     *
     * @return false if the slot is provably no longer this participant's or another writer moved the
     *     mark
     */
    boolean writeMark(ZooKeeper zk, Holding h, long untilMillis) {
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
                            h.slot.workerId(),
                            h.markPath,
                            now);
                    return false;
                }
                h.markVersion = stat.getVersion();
            } catch (KeeperException.NoNodeException e) {
                return false;
            } catch (KeeperException | InterruptedException e) {
                throw failure("reserving worker id " + h.slot.workerId(), e);
            }
        }
        return false;
    }

    void ensureParents(ZooKeeper zk) {
        try {
            // the ACL provider: these may be the first nodes of the cluster (even of /pidpool)
            ZKPaths.mkdirs(zk, slotsPath, true, aclProvider, false);
            ZKPaths.mkdirs(zk, marksPath, true, aclProvider, false);
        } catch (KeeperException | InterruptedException e) {
            throw failure("creating " + slotsPath, e);
        }
    }
    /** The slots taken now. */
    Set<Integer> list(ZooKeeper zk) {
        try {
            return parse(zk.getChildren(slotsPath, false));
        } catch (KeeperException | InterruptedException e) {
            throw failure("listing " + slotsPath, e);
        }
    }

    /** The node may still exist under {@code session}: delete it when that session can reach ZooKeeper. */
    void forget(String path, long session) {
        orphans.add(new Orphan(path, session));
    }

    /** Deletes the orphans of the current session; forgets those of other sessions (gone with them). */
    void flushOrphans(ZooKeeper zk) {
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

    /** Who holds which slot, read now through {@code namespaced}; unreadable holders are left out. */
    Map<Integer, SlotHolder> holders(CuratorFramework namespaced) {
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

    static boolean ownedBy(ZooKeeper zk, String path, long session) {
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

    static Set<Integer> parse(List<String> names) {
        Set<Integer> slots = new HashSet<>();
        for (String name : names) {
            WorkerSlots.parse(name).ifPresent(slots::add);
        }
        return Set.copyOf(slots);
    }

    private String full(String relative) {
        return ZKPaths.makePath(layout.namespace(), relative);
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

    /** {@code <host>-<pid>-<n>}: unique per registry in this JVM, readable for operators. */

    /** {@code <host>-<pid>-<n>}: unique per registry in this JVM, readable for operators. */
    static String defaultOwner(String host) {
        String h = (host != null ? host : ZkSessions.localHostName()).replaceAll("[^A-Za-z0-9_.-]", "-");
        if (h.length() > MAX_HOST_PREFIX) {
            h = h.substring(0, MAX_HOST_PREFIX);
        }
        h = h.replaceAll("^[.-]+", "");
        if (h.isEmpty()) {
            h = "host";
        }
        return h + "-" + ProcessHandle.current().pid() + "-" + OWNERS.incrementAndGet();
    }
}
