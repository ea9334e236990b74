package io.pidpool.server.leader;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.zookeeper.CreateMode;

/**
 * The handshakes of a pass: for each live instance without them, its pids node (with a copy of its
 * registration) and the pointer to it in the instance node; and whether an instance is ready for
 * PID nodes ({@link #ready}).
 */
final class Handshakes {
    private final ReconcilePass p;
    private final ZkView view;
    private final TermBookkeeping state;
    private final ZkLayout layout;
    /** Instances whose handshake this pass writes (their adds may follow it in the same pass). */
    private final Set<InstanceKey> handshaking = new HashSet<>();

    Handshakes(ReconcilePass p, ZkLayout layout) {
        this.p = p;
        this.view = p.view;
        this.state = p.state;
        this.layout = layout;
    }

    void handshakes() {
        for (ModuleKey module : view.modules()) {
            for (ZkView.InstanceEntry instance : view.instances(module).values()) {
                if (!instance.entry().stat().isEphemeral()) {
                    continue;
                }
                InstanceKey key = instance.key();
                String expected = layout.pids(module, key.instance());
                boolean pidsNode = view.pidsNodes(module).containsKey(key.instance());
                InstanceNode data = instance.node() != null ? instance.node() : InstanceNode.registering(1, "");
                boolean pointed = instance.node() != null
                        && expected.equals(instance.node().pidsPath());
                if (pidsNode && pointed) {
                    continue;
                }
                List<ZkWrite> writes = new ArrayList<>();
                if (!pidsNode) {
                    // a copy of the registration outlives the ephemeral instance node: its callback
                    // deadline still counts in the grace once the instance is gone (graceOf)
                    writes.add(new ZkWrite.Create(
                            expected, data.withPidsPath(expected).encode(), CreateMode.PERSISTENT));
                }
                if (!pointed) {
                    writes.add(new ZkWrite.SetData(
                            instance.entry().path(),
                            data.withPidsPath(expected).encode(),
                            instance.entry().stat().version()));
                }
                if (p.write(Intent.Kind.HANDSHAKE, key, null, writes, Map.of(), "handshake")) {
                    handshaking.add(key);
                }
            }
        }
    }

    /**
     * Whether PID nodes may be written for this instance now: its handshake is done, or written in
     * this pass, or on its way. docs/design.md §5's order (pids node, its path in the instance node, then the
     * share as ADDING) is kept without waiting a round trip for the handshake's answer: the leader
     * writes through one session, whose requests ZooKeeper applies in order, and the intents of a
     * pass are submitted in order (handshakes before the placement's adds), so the creates reach the
     * server behind the pids node and the pointer. If the handshake fails, the creates under a
     * missing pids node fail too (NONODE: nothing is held, the PIDs are placed again), or land under
     * an existing one the SDK lists once it is pointed at it (it reads the children that are there
     * when it starts watching).
     */
    boolean ready(InstanceKey key) {
        ZkView.InstanceEntry instance = p.live(key);
        if (instance != null && (handshaking.contains(key) || state.handshakeInFlight(key))) {
            return true;
        }
        String expected = layout.pids(key.module(), key.instance());
        return instance != null
                && instance.node() != null
                && expected.equals(instance.node().pidsPath())
                && view.pidsNodes(key.module()).containsKey(key.instance())
                && !state.inFlight(expected)
                && !state.inFlight(instance.entry().path());
    }
}
