package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The database's assignment rows of a pass: one row per PID with a node, mirroring ZooKeeper, stamped
 * with this epoch; only the rows that differ from the stored ones are written. An incremental pass
 * looks only at the PIDs that changed.
 */
final class RowSync {
    private final ReconcilePass p;
    private final ZkView view;
    private final DbView db;
    private final TermBookkeeping state;
    private final Epoch epoch;
    private final Reconciler.Scope scope;
    private final List<Assignment> rowUpserts;
    private final Set<String> rowRemovals;

    RowSync(ReconcilePass p) {
        this.p = p;
        this.view = p.view;
        this.db = p.db;
        this.state = p.state;
        this.epoch = p.epoch;
        this.scope = p.scope;
        this.rowUpserts = p.rowUpserts;
        this.rowRemovals = p.rowRemovals;
    }

    void rows() {
        if (!scope.rows()) {
            return;
        }
        if (!scope.full()) {
            for (String pid : scope.dirtyPids()) {
                Map<String, Assignment> wanted = new HashMap<>(2);
                collectRows(view.nodesOf(pid), wanted);
                Assignment row = wanted.get(pid);
                if (row != null && row.state() == PidState.ADDING) {
                    // transient: the ack usually follows within milliseconds and changes the row
                    // again; a full pass writes it if the ADDING lasts (halves the row writes of a
                    // hand-out)
                    continue;
                }
                if (row != null && !row.equals(state.rows().get(pid))) {
                    rowUpserts.add(row);
                } else if (row == null && state.rows().containsKey(pid)) {
                    rowRemovals.add(pid);
                }
            }
            return;
        }
        Map<String, Assignment> wanted = new HashMap<>();
        collectRows(view.allPidNodes(), wanted);
        for (Assignment row : wanted.values()) {
            if (!row.equals(state.rows().get(row.pidId()))) {
                rowUpserts.add(row);
            }
        }
        for (String pid : state.rows().keySet()) {
            if (!wanted.containsKey(pid)) {
                rowRemovals.add(pid);
            }
        }
    }

    /** One row per PID with a node, stamped with this epoch; a live claim beats a DELETED node. */
    void collectRows(Collection<ZkView.PidEntry> entries, Map<String, Assignment> wanted) {
        for (ZkView.PidEntry entry : entries) {
            PidNode node = entry.node();
            if (node == null
                    || db.pid(entry.pidId()) == null
                    || !db.configured(entry.holder().module())) {
                continue;
            }
            Assignment current = wanted.get(entry.pidId());
            if (current != null && current.state() != PidState.DELETED && node.state() == PidState.DELETED) {
                continue;
            }
            wanted.put(
                    entry.pidId(),
                    new Assignment(
                            entry.pidId(),
                            entry.holder().module(),
                            entry.holder().instance(),
                            node.state(),
                            epoch,
                            node.ownerSessionId()));
        }
    }
}
