package io.pidpool.server.runtime;

import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.server.jdbc.JdbiModuleMoves;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.ReadModel;
import io.pidpool.server.usage.UsageFacts;
import io.pidpool.server.usage.UsageMetrics;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link UsageFacts} and the metrics' server state from the coordination node's read model (database + its ZooKeeper view). */
public final class NodeUsageFacts implements UsageFacts, UsageMetrics.ServerState {
    private final ClusterMember node;
    private final JdbiModuleMoves moves;

    NodeUsageFacts(ClusterMember node) {
        this(node, null);
    }

    /** @param moves {@code null}: module usage is always estimated */
    public NodeUsageFacts(ClusterMember node, JdbiModuleMoves moves) {
        this.node = node;
        this.moves = moves;
    }

    @Override
    public Optional<Set<ModuleKey>> modulesChangedSince(Instant since) {
        return moves == null ? Optional.empty() : Optional.of(moves.changedSince(since));
    }

    @Override
    public List<ModuleFacts> modules() {
        List<ModuleFacts> out = new ArrayList<>();
        for (ReadModel.Module m : node.modules()) {
            int live = (int)
                    m.instances().stream().filter(ReadModel.Instance::live).count();
            out.add(new ModuleFacts(m.config(), live));
        }
        return out;
    }

    @Override
    public List<PidFacts> pids() {
        List<PidFacts> out = new ArrayList<>();
        for (ReadModel.Pid p : node.pids(null, null)) {
            out.add(new PidFacts(p.id(), p.module(), p.status(), p.monthlyQuota(), p.overageAllowance()));
        }
        return out;
    }

    @Override
    public boolean isLeader() {
        return node.isLeader();
    }

    @Override
    public long epoch() {
        return node.epoch().value();
    }

    @Override
    public long heldPids() {
        long held = 0;
        for (ReadModel.Module m : node.modules()) {
            held += m.held();
        }
        return held;
    }
}
