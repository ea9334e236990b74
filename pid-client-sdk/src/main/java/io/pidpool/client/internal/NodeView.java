package io.pidpool.client.internal;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.protocol.PidNode;

/**
 * One observed version of a PID node: where it is, its ZooKeeper version (for the versioned
 * acknowledgement) and modification zxid (to order observations: a zxid only grows, even across a
 * delete and re-create), and its decoded content, or why it could not be decoded.
 *
 * @param generation the client's registration generation the observation belongs to
 * @param name the node's name, i.e. the PID id the leader meant
 * @param node the decoded content; {@code null} if malformed
 * @param malformed why the data could not be decoded; {@code null} if it could
 */
record NodeView(long generation, String path, String name, int version, long mzxid, PidNode node, String malformed) {

    static NodeView read(long generation, String path, byte[] data, int version, long mzxid) {
        String name = path.substring(path.lastIndexOf('/') + 1);
        try {
            PidNode node = PidNode.decode(data);
            if (!node.pidId().equals(name)) {
                return new NodeView(
                        generation,
                        path,
                        name,
                        version,
                        mzxid,
                        null,
                        "pid id in the data ('" + node.pidId() + "') differs from the node name");
            }
            return new NodeView(generation, path, name, version, mzxid, node, null);
        } catch (PidPoolException e) {
            return new NodeView(generation, path, name, version, mzxid, null, e.getMessage());
        }
    }

    static NodeView of(long generation, String path, PidNode node, int version, long mzxid) {
        return new NodeView(generation, path, node.pidId(), version, mzxid, node, null);
    }

    boolean isMalformed() {
        return node == null;
    }
}
