package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.server.zk.CuratorEpochNode;
import io.pidpool.server.zk.EpochNode;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.ZkSupport;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * {@link TermStart.Port} over the node's Curator client, its {@code /modules} watcher and its quota
 * ledger. The start holds the serial executor from the bump to the replay (docs/leader.md §2), so
 * every wait happens here, bounded by {@code zkTimeout}: {@link #arrived} blocks, and the bump's
 * {@link CuratorEpochNode} is blocking. Only the scan runs meanwhile, while the database is loaded.
 *
 * <p>Concurrency: called on the serial executor.
 */
final class CuratorTermStartPort implements TermStart.Port {
    private final NodeContext ctx;
    private final Consumer<PidPoolException> fenced;

    /** @param fenced runs on the serial executor when the term's writes are refused */
    CuratorTermStartPort(NodeContext ctx, Consumer<PidPoolException> fenced) {
        this.ctx = ctx;
        this.fenced = fenced;
    }

    @Override
    public EpochNode epochNode() {
        return new CuratorEpochNode(ctx.client());
    }

    @Override
    public void epochRaised(Epoch epoch) {
        ctx.quota().termBegan(epoch); // Redis limits: fenced at this epoch before the first write
    }

    @Override
    public FencedWriter writer(FenceToken token) {
        return new FencedWriter(
                () -> ZkSupport.zooKeeper(ctx.client()),
                ctx.layout().namespace(),
                ctx.layout().epoch(),
                token,
                ctx.settings().maxOpsPerMulti(),
                ctx.settings().maxInFlightMultis(),
                ctx.acl(),
                cause -> ctx.serial().execute(() -> fenced.accept(cause)));
    }

    @Override
    public Duration negotiatedSessionTimeout() {
        return ZkSupport.negotiatedSessionTimeout(ctx.client());
    }

    @Override
    public CompletionStage<Void> sync() {
        return ZkSupport.sync(ctx.client(), "/");
    }

    @Override
    public TreeFollower.Proof proveView() {
        return ctx.viewProof().apply(ctx.settings().zkTimeout());
    }

    @Override
    public CompletionStage<List<NodeEvent>> scan() {
        return ctx.scanner().scan(ctx.layout().modules(), 3);
    }

    @Override
    public <T> CompletionStage<T> arrived(CompletionStage<T> pending, String what) {
        try {
            return CompletableFuture.completedFuture(ZkSupport.await(
                    pending.toCompletableFuture(), ctx.settings().zkTimeout(), what));
        } catch (PidPoolException e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
