package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.core.sim.SimZooKeeper.Code;
import io.pidpool.server.zk.EpochNode;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * {@link TermStart.Port} over a {@link SimZooKeeper.Client}: the adapter through which the simulation
 * runs the production term start. Each stage completes in the answer's callback on the simulation's
 * scheduler; once the term is closed, answers are dropped (the stage never completes, so a term that
 * ended mid-start does nothing more). Not modelled: the view proof (a new term always scans) and the
 * quota ledger (nothing else to fence).
 */
final class SimTermStartPort implements TermStart.Port {
    private final SimZooKeeper.Client zk;
    private final ZkLayout layout;
    private final LeaderSettings settings;
    private final BooleanSupplier closed;
    private final Consumer<PidPoolException> fenced;

    /** @param fenced the writer's fenced listener (the caller posts it to the node's proc) */
    SimTermStartPort(
            SimZooKeeper.Client zk,
            ZkLayout layout,
            LeaderSettings settings,
            BooleanSupplier closed,
            Consumer<PidPoolException> fenced) {
        this.zk = zk;
        this.layout = layout;
        this.settings = settings;
        this.closed = closed;
        this.fenced = fenced;
    }

    @Override
    public EpochNode epochNode() {
        return new SimEpochNode(zk, closed);
    }

    @Override
    public void epochRaised(Epoch epoch) {}

    @Override
    public FencedWriter writer(FenceToken token) {
        return new FencedWriter(
                new SimMultiOps(zk),
                layout.epoch(),
                token,
                settings.maxOpsPerMulti(),
                settings.maxInFlightMultis(),
                fenced);
    }

    @Override
    public Duration negotiatedSessionTimeout() {
        return Duration.ofNanos(zk.negotiatedTimeout());
    }

    @Override
    public CompletionStage<Void> sync() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        zk.sync((code, v) -> {
            if (closed.getAsBoolean()) {
                return;
            }
            if (code == Code.OK) {
                done.complete(null);
            } else {
                done.completeExceptionally(PidPoolException.unavailable("sync " + code, null));
            }
        });
        return done;
    }

    @Override
    public TreeFollower.Proof proveView() {
        return TreeFollower.Proof.unproven("the simulation does not model the view proof");
    }

    @Override
    public CompletionStage<List<NodeEvent>> scan() {
        CompletableFuture<List<NodeEvent>> done = new CompletableFuture<>();
        zk.readTree(layout.modules(), (code, nodes) -> {
            if (closed.getAsBoolean()) {
                return;
            }
            if (code == Code.OK) {
                done.complete(SimLeader.toEvents(nodes));
            } else {
                done.completeExceptionally(PidPoolException.unavailable("scan " + code, null));
            }
        });
        return done;
    }

    @Override
    public <T> CompletionStage<T> arrived(CompletionStage<T> pending, String what) {
        return pending; // completes on the scheduler, the node's only thread
    }
}
