package io.pidpool.server.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.core.sim.SimZooKeeper.Code;
import io.pidpool.server.zk.EpochNode;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;

/**
 * {@link EpochNode} over a {@link SimZooKeeper.Client}: the adapter through which the simulation runs
 * the production epoch bump ({@link io.pidpool.server.zk.EpochFence#bump(EpochNode, String,
 * io.pidpool.core.model.Epoch)}). Each stage completes in the answer's callback on the simulation's
 * scheduler; once the term is closed, answers are dropped (the stage never completes, so a term that
 * ended mid-bump writes nothing more).
 */
final class SimEpochNode implements EpochNode {
    private final SimZooKeeper.Client zk;
    private final BooleanSupplier closed;

    SimEpochNode(SimZooKeeper.Client zk, BooleanSupplier closed) {
        this.zk = zk;
        this.closed = closed;
    }

    @Override
    public long sessionId() {
        return zk.sessionId();
    }

    @Override
    public CompletionStage<Versioned> read(String path) {
        CompletableFuture<Versioned> done = new CompletableFuture<>();
        zk.getData(path, false, (code, r) -> {
            if (closed.getAsBoolean()) {
                return;
            }
            if (code == Code.NONODE) {
                done.complete(null);
            } else if (code == Code.OK) {
                done.complete(new Versioned(r.data(), r.stat().version()));
            } else {
                done.completeExceptionally(PidPoolException.unavailable("read " + path + ": " + code, null));
            }
        });
        return done;
    }

    @Override
    public CompletionStage<Integer> write(String path, byte[] data, int expectedVersion) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        zk.setData(path, data, expectedVersion, (code, r) -> {
            if (closed.getAsBoolean()) {
                return;
            }
            if (code == Code.OK) {
                done.complete(r.stat().version());
            } else if (code == Code.BADVERSION || code == Code.NONODE) {
                done.complete(-1);
            } else {
                done.completeExceptionally(PidPoolException.unavailable("bump " + path + ": " + code, null));
            }
        });
        return done;
    }

    @Override
    public CompletionStage<Boolean> create(String path, byte[] data) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        zk.createWithParents(path, data, SimZooKeeper.Mode.PERSISTENT, (code, r) -> {
            if (closed.getAsBoolean()) {
                return;
            }
            if (code == Code.OK || code == Code.NODEEXISTS) {
                done.complete(code == Code.OK);
            } else {
                done.completeExceptionally(PidPoolException.unavailable("create " + path + ": " + code, null));
            }
        });
        return done;
    }
}
