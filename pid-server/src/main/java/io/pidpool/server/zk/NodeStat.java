package io.pidpool.server.zk;

import org.apache.zookeeper.data.Stat;

/**
 * The parts of a ZooKeeper {@link Stat} the leader orders its observations by.
 *
 * @param czxid the transaction that created this incarnation of the node
 * @param mzxid the transaction that last changed its data
 * @param pzxid the transaction that last changed its children
 * @param version the data version (what a versioned setData/delete checks)
 * @param ephemeralOwner the owning session of an EPHEMERAL node, 0 otherwise
 */
public record NodeStat(long czxid, long mzxid, long pzxid, int version, long ephemeralOwner, int numChildren) {
    public static NodeStat of(Stat stat) {
        return new NodeStat(
                stat.getCzxid(),
                stat.getMzxid(),
                stat.getPzxid(),
                stat.getVersion(),
                stat.getEphemeralOwner(),
                stat.getNumChildren());
    }

    public boolean isEphemeral() {
        return ephemeralOwner != 0;
    }
}
