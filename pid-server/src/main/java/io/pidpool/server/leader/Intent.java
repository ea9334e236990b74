package io.pidpool.server.leader;

import io.pidpool.server.zk.ZkWrite;
import java.util.List;
import java.util.Map;

/**
 * One decided write to the PidPool tree, sent through the fenced writer as one unit. Until its
 * outcome is known, its paths and its PID are "in flight": the reconciler decides nothing else about
 * them.
 *
 * @param pid the PID concerned, or {@code null} for instance-level writes
 * @param deletedCzxids for each deleted path, the incarnation the decision was about (so the view can
 *     replay the delete without a stat)
 */
public record Intent(
        Kind kind, InstanceKey holder, String pid, List<ZkWrite> writes, Map<String, Long> deletedCzxids, String why) {
    public enum Kind {
        HANDSHAKE,
        ADD,
        UPDATE,
        REVOKE,
        REMOVE_NODE,
        REMOVE_PIDS_NODE,
        NOTIFY
    }

    public Intent {
        writes = List.copyOf(writes);
        deletedCzxids = Map.copyOf(deletedCzxids);
    }

    @Override
    public String toString() {
        return kind + " " + (pid == null ? "" : pid + " ") + "at " + holder + " (" + why + ")";
    }
}
