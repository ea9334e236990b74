package io.pidpool.server.zk;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;

/**
 * {@link MultiOpSession} over the raw ZooKeeper handle of the leader's Curator client: paths get the
 * namespace prefix, creates the cluster's ACL (Curator's ACL provider does not apply to the raw handle).
 *
 * <p>Concurrency: thread-safe; ZooKeeper's event thread delivers the answers.
 */
public final class ZooKeeperMultiOps implements MultiOpSession {
    private final Supplier<ZooKeeper> zooKeeper;
    private final String prefix;
    private final List<ACL> acl;
    /** One per create mode (immutable; built once instead of once per create). */
    private final Map<CreateMode, CreateOptions> createOptions = new ConcurrentHashMap<>();

    /**
     * @param zooKeeper the current handle (it changes when a session is replaced)
     * @param namespace the Curator namespace without leading slash, e.g. {@code pidpool/default}
     */
    public ZooKeeperMultiOps(Supplier<ZooKeeper> zooKeeper, String namespace, List<ACL> acl) {
        this.zooKeeper = zooKeeper;
        this.prefix = "/" + namespace;
        // not List.copyOf: ZooKeeper's validateACL asks contains(null)
        this.acl = java.util.Collections.unmodifiableList(new ArrayList<>(acl));
    }

    @Override
    public long sessionId() {
        ZooKeeper zk = zooKeeper.get();
        return zk == null ? 0 : zk.getSessionId();
    }

    @Override
    public void multi(List<ZkWrite> writes, Answer answer) {
        ZooKeeper zk = zooKeeper.get();
        if (zk == null) {
            throw new IllegalStateException("no ZooKeeper handle");
        }
        List<Op> ops = new ArrayList<>(writes.size());
        for (ZkWrite write : writes) {
            ops.add(toOp(write));
        }
        zk.multi(ops, (rc, path, ctx, results) -> answer.done(rc, results == null ? null : outcomes(results)), null);
    }

    private Op toOp(ZkWrite write) {
        String path = prefix + write.path();
        if (write instanceof ZkWrite.Create c) {
            return Op.create(
                    path, c.data(), createOptions.computeIfAbsent(c.mode(), mode -> CreateOptions.newBuilder(acl, mode)
                            .build()));
        } else if (write instanceof ZkWrite.SetData s) {
            return Op.setData(path, s.data(), s.version());
        } else if (write instanceof ZkWrite.Delete d) {
            return Op.delete(path, d.version());
        } else {
            return Op.check(path, ((ZkWrite.Check) write).version());
        }
    }

    private static List<OpOutcome> outcomes(List<OpResult> results) {
        List<OpOutcome> outcomes = new ArrayList<>(results.size());
        for (OpResult result : results) {
            if (result instanceof OpResult.ErrorResult error) {
                outcomes.add(new OpOutcome(error.getErr(), null));
            } else if (result instanceof OpResult.CreateResult create && create.getStat() != null) {
                outcomes.add(new OpOutcome(0, NodeStat.of(create.getStat())));
            } else if (result instanceof OpResult.SetDataResult set) {
                outcomes.add(new OpOutcome(0, NodeStat.of(set.getStat())));
            } else {
                outcomes.add(new OpOutcome(0, null));
            }
        }
        return outcomes;
    }
}
