package io.pidpool.server.leader;

import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.leader.ZkView.PidEntry;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * What changed in a {@link ZkView}, for the leader's passes: a structure version that moves with
 * every change a placement decision can depend on (instance, pids and PID nodes appearing or going,
 * PID nodes changing other than by an acknowledgement between kept states), and, while tracking, the
 * PIDs an incremental pass must look at again.
 *
 * <p>The view reports what it indexes; this class tells an acknowledgement from a move by comparing
 * a PID node's entry before and after one observation. Not thread-safe; owned by its view.
 */
final class ViewChanges {
    private boolean tracking;
    private final Set<String> dirtyPids = new HashSet<>();
    private long structure;
    /** The PID entry the view just removed from its index, so {@link #pidIndexed} can tell an ack from a move. */
    private PidEntry unindexedPid;

    /** One observation begins: nothing of it was unindexed yet. */
    void observationStarts() {
        unindexedPid = null;
    }

    /** A pids node appeared or went. */
    void structureChanged() {
        structure++;
    }

    /** An instance node came, went or changed: its PIDs' housekeeping may change (owner session). */
    void instanceChanged(Collection<String> pidsOfInstance) {
        structure++;
        if (tracking) {
            dirtyPids.addAll(pidsOfInstance);
        }
    }

    /** A PID node left the index ({@code old} may be null); undone by {@link #pidIndexed} for an ack. */
    void pidUnindexed(String pid, PidEntry old) {
        unindexedPid = old;
        structure++;
        markDirty(pid);
    }

    /** A PID node entered the index: new, or back after {@link #pidUnindexed} in the same observation. */
    void pidIndexed(PidEntry entry) {
        if (unindexedPid == null) {
            structure++; // a new node
        } else if (samePlacement(unindexedPid, entry)) {
            structure--; // an acknowledgement: undo the count of pidUnindexed()
        }
        unindexedPid = null;
        markDirty(entry.pidId());
    }

    void track(boolean on) {
        tracking = on;
        dirtyPids.clear();
    }

    Set<String> drainDirtyPids() {
        if (dirtyPids.isEmpty()) {
            return Set.of();
        }
        Set<String> drained = new HashSet<>(dirtyPids);
        dirtyPids.clear();
        return drained;
    }

    void markDirty(String pid) {
        if (tracking) {
            dirtyPids.add(pid);
        }
    }

    long structureVersion() {
        return structure;
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
}
