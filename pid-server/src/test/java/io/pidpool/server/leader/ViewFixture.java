package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.NodeStat;
import java.util.HashMap;
import java.util.Map;

/** Builds ZooKeeper observations for unit tests, with zxids that grow like a real server's. */
final class ViewFixture {
    static final ZkLayout LAYOUT = new ZkLayout("unit");

    final io.pidpool.core.testing.ManualTicker ticker = new io.pidpool.core.testing.ManualTicker();
    final ZkView view = new ZkView(LAYOUT, ticker);
    private long zxid = 100;
    private final Map<String, NodeStat> stats = new HashMap<>();

    long nextZxid() {
        return ++zxid;
    }

    /** A registered instance (ephemeral, owned by {@code session}); {@code handshaken} adds its pids node. */
    InstanceKey instance(ModuleKey module, String id, long session, boolean handshaken) {
        return instance(module, id, session, handshaken, InstanceNode.registering(1, "h"));
    }

    /**
     * The same with the instance's own registration data; a handshaken instance's pids node holds a
     * copy of it, as the leader writes it.
     */
    InstanceKey instance(ModuleKey module, String id, long session, boolean handshaken, InstanceNode registered) {
        InstanceKey key = new InstanceKey(module, InstanceId.of(id));
        InstanceNode data = registered;
        if (handshaken) {
            data = data.withPidsPath(LAYOUT.pids(module, key.instance()));
            create(LAYOUT.pids(module, key.instance()), data.encode(), 0);
        }
        create(LAYOUT.instance(module, key.instance()), data.encode(), session);
        return key;
    }

    /** Writes (creates or changes) a PID node. */
    String pid(InstanceKey holder, String pid, PidState state, Epoch epoch, long owner) {
        PidNode node = new PidNode(pid, state, epoch, owner, DbFixture.payload(pid), "");
        return put(LAYOUT.pid(holder.module(), holder.instance(), pid), node.encode());
    }

    String failedPid(InstanceKey holder, String pid, Epoch epoch, long owner) {
        PidNode node = new PidNode(pid, PidState.ADDING, epoch, owner, DbFixture.payload(pid), "login refused");
        return put(LAYOUT.pid(holder.module(), holder.instance(), pid), node.encode());
    }

    String raw(String path, byte[] data) {
        return put(path, data);
    }

    private String put(String path, byte[] data) {
        NodeStat old = stats.get(path);
        if (old == null) {
            create(path, data, 0);
        } else {
            long z = nextZxid();
            NodeStat stat = new NodeStat(old.czxid(), z, old.pzxid(), old.version() + 1, old.ephemeralOwner(), 0);
            stats.put(path, stat);
            view.replay(new NodeEvent.Upsert(path, data, stat));
        }
        return path;
    }

    private void create(String path, byte[] data, long owner) {
        long z = nextZxid();
        NodeStat stat = new NodeStat(z, z, z, 0, owner, 0);
        stats.put(path, stat);
        view.replay(new NodeEvent.Upsert(path, data, stat));
    }

    void delete(String path) {
        NodeStat stat = stats.remove(path);
        view.replay(new NodeEvent.Removed(path, stat));
    }

    void vanish(InstanceKey key) {
        delete(LAYOUT.instance(key.module(), key.instance()));
    }

    NodeStat stat(String path) {
        return stats.get(path);
    }
}
