package io.pidpool.server.leader;

import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.server.zk.MultiOpSession;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException;

/**
 * {@link MultiOpSession} over a {@link SimZooKeeper.Client}: the adapter through which the simulation
 * drives the production {@link io.pidpool.server.zk.FencedWriter}. Codes are mapped by name; a create
 * or setData answers with the new stat, as ZooKeeper's create2/setData results do.
 *
 * <p>Concurrency: single-threaded on the simulation's scheduler.
 */
final class SimMultiOps implements MultiOpSession {
    private final SimZooKeeper.Client zk;

    SimMultiOps(SimZooKeeper.Client zk) {
        this.zk = zk;
    }

    @Override
    public long sessionId() {
        return zk.lastSessionId();
    }

    @Override
    public void multi(List<ZkWrite> writes, Answer answer) {
        List<SimZooKeeper.Op> ops = new ArrayList<>(writes.size());
        writes.forEach(w -> ops.add(toOp(w)));
        zk.multi(ops, (code, results) -> {
            List<OpOutcome> outcomes = null;
            if (results != null) {
                outcomes = new ArrayList<>(results.size());
                for (int i = 0; i < results.size(); i++) {
                    SimZooKeeper.OpResult r = results.get(i);
                    boolean withStat = r.code() == SimZooKeeper.Code.OK
                            && r.stat() != null
                            && (writes.get(i) instanceof ZkWrite.Create || writes.get(i) instanceof ZkWrite.SetData);
                    outcomes.add(new OpOutcome(code(r.code()), withStat ? SimLeader.stat(r.stat()) : null));
                }
            }
            answer.done(code(code), outcomes);
        });
    }

    private static int code(SimZooKeeper.Code code) {
        return KeeperException.Code.valueOf(code.name()).intValue();
    }

    private static SimZooKeeper.Op toOp(ZkWrite write) {
        if (write instanceof ZkWrite.Create c) {
            SimZooKeeper.Mode mode =
                    switch (c.mode()) {
                        case EPHEMERAL -> SimZooKeeper.Mode.EPHEMERAL;
                        case EPHEMERAL_SEQUENTIAL -> SimZooKeeper.Mode.EPHEMERAL_SEQUENTIAL;
                        default -> SimZooKeeper.Mode.PERSISTENT;
                    };
            return new SimZooKeeper.Create(c.path(), c.data(), mode);
        } else if (write instanceof ZkWrite.SetData s) {
            return new SimZooKeeper.SetData(s.path(), s.data(), s.version());
        } else if (write instanceof ZkWrite.Delete d) {
            return new SimZooKeeper.Delete(d.path(), d.version());
        }
        return new SimZooKeeper.Check(write.path(), ((ZkWrite.Check) write).version());
    }
}
