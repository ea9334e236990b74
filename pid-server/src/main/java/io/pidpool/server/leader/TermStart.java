package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.EpochFence;
import io.pidpool.server.zk.EpochNode;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.TreeWatcher;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * The start of a leadership term, everything before it serves: bump {@code /epoch} (remembering the
 * version), raise the database's leader epoch to it ({@link LeaderDatabase#beginTerm}) and fence the
 * other stores, create the term's {@link FencedWriter}, derive the grace period from the negotiated
 * session timeout, {@code sync()}, then either take the node's watched view as proven current as of a
 * barrier after the sync ({@link TreeWatcher#proveCurrent}) or scan {@code /modules} (the scan is what
 * happens on any doubt; it runs while the accounts are loaded, {@link TermLoader#loadAccounts}), and
 * replay the scan into the view.
 *
 * <p>One asynchronous algorithm over the {@link Port}, as the bump is over {@link EpochNode}: production
 * runs it over Curator ({@link CuratorTermStartPort}, whose stages are complete when returned, so the
 * whole start runs on the calling thread and {@link #await} does not wait), the protocol simulation
 * over its ZooKeeper on virtual time.
 *
 * <p>Concurrency: the term's serial executor; every stage continues there (production: on the calling
 * thread; the simulation: single-threaded).
 */
final class TermStart {
    /** What the start needs of ZooKeeper and of the node it runs on. */
    interface Port {
        /** {@code /epoch}, for the bump. */
        EpochNode epochNode();

        /**
         * The database's leader epoch was raised to {@code epoch}: fence the other stores this term
         * writes to before its first write (production: the quota limits in Redis).
         */
        void epochRaised(Epoch epoch);

        /** The term's writer; its fenced listener hands the cause to the term's serial executor. */
        FencedWriter writer(FenceToken token);

        /** The negotiated (never the requested) session timeout of the session that bumped. */
        Duration negotiatedSessionTimeout();

        /** {@code sync()}: afterwards, reads see every write committed before the call. */
        CompletionStage<Void> sync();

        /** Whether the node's watched view is current as of a barrier after the sync, or why not. */
        TreeFollower.Proof proveView();

        /** Starts a scan of {@code /modules}, as the events to replay into the view. */
        CompletionStage<List<NodeEvent>> scan();

        /**
         * {@code pending}, continued on the term's thread: production waits for it here (the start
         * holds the serial executor, so nothing may continue on ZooKeeper's thread); stages that
         * complete on the term's thread anyway are returned as they are.
         */
        <T> CompletionStage<T> arrived(CompletionStage<T> pending, String what);
    }

    /** What the steps cost, for the term start's log line (nanoseconds). */
    record Timings(long bumpAndSync, long proof, long database, long restOfScan, long replay) {}

    private final ZkLayout layout;
    private final LeaderSettings settings;
    private final LeaderDatabase store;
    private final ZkView view;
    private final TermLoader loader;
    private final Function<Duration, PlacementPolicy> placement;
    private final Port port;
    private final Ticker ticker;
    private final BooleanSupplier ended;

    private FenceToken token;
    private FencedWriter writer;
    private Duration negotiated;
    private Duration grace;
    private PlacementPolicy policy;
    private TreeFollower.Proof proof;
    private Timings timings;

    /**
     * @param placement the term's placement policy for its grace period
     * @param ticker measures the steps ({@link #timings})
     * @param ended whether the term ended meanwhile: then the start stops at its next step
     */
    TermStart(
            ZkLayout layout,
            LeaderSettings settings,
            LeaderDatabase store,
            ZkView view,
            TermLoader loader,
            Function<Duration, PlacementPolicy> placement,
            Port port,
            Ticker ticker,
            BooleanSupplier ended) {
        this.layout = layout;
        this.settings = settings;
        this.store = store;
        this.view = view;
        this.loader = loader;
        this.placement = placement;
        this.port = port;
        this.ticker = ticker;
        this.ended = ended;
    }

    /**
     * Runs the steps; the stage completes once the view is ready to serve from, or fails with the
     * step's error (a {@link CancellationException} if the term ended meanwhile).
     */
    CompletionStage<Void> run() {
        long t0 = ticker.read();
        // above the database's epoch too (a ZooKeeper that lost /epoch must not restart below it), and
        // then the database's epoch raised to ours: from here a deposed leader's transactions fail, and
        // one that checked the epoch before is committed before this returns
        return EpochFence.bump(port.epochNode(), layout.epoch(), store.leaderEpoch())
                .thenCompose(fence -> {
                    stopIfEnded();
                    token = fence;
                    store.beginTerm(token.epoch());
                    port.epochRaised(token.epoch()); // e.g. Redis limits: fenced before the first write
                    writer = port.writer(token);
                    negotiated = port.negotiatedSessionTimeout();
                    grace = settings.graceFor(negotiated);
                    policy = placement.apply(grace);
                    return port.arrived(port.sync(), "sync");
                })
                .thenCompose(synced -> {
                    stopIfEnded();
                    long t1 = ticker.read();
                    // the watcher has followed /modules all along: if it proves the view current as of a
                    // barrier after this sync (TreeWatcher.proveCurrent, docs/leader.md §2a), the scan
                    // would add nothing
                    proof = port.proveView();
                    long tp = ticker.read();
                    // the scan is asynchronous (read multi-ops, a level's requests all in flight): it
                    // runs while this thread loads the database, instead of after it
                    CompletionStage<List<NodeEvent>> scanning =
                            proof.current() ? CompletableFuture.completedFuture(List.of()) : port.scan();
                    // the assignment rows are not needed to serve: they are read after the first pass
                    loader.loadAccounts();
                    long t2 = ticker.read();
                    return port.arrived(scanning, "scan").thenAccept(scan -> {
                        stopIfEnded();
                        long t3 = ticker.read();
                        scan.forEach(view::replay);
                        long t4 = ticker.read();
                        timings = new Timings(t1 - t0, tp - t1, t2 - tp, t3 - t2, t4 - t3);
                    });
                });
    }

    private void stopIfEnded() {
        if (ended.getAsBoolean()) {
            throw new CancellationException("the term ended during its start");
        }
    }

    /**
     * Waits for {@code started} on the calling thread and throws what failed it. For production, whose
     * port completes every stage before returning it: a stage still pending is a bug, not a wait.
     */
    static void await(CompletionStage<Void> started) {
        CompletableFuture<Void> done = started.toCompletableFuture();
        if (!done.isDone()) {
            throw new IllegalStateException("the term start left a step pending on a blocking port");
        }
        try {
            done.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw PidPoolException.unavailable("term start failed", cause);
        }
    }

    /** The term's token once {@code /epoch} is bumped, else null. */
    FenceToken token() {
        return token;
    }

    /** The term's writer once created, else null (a start that failed later still has one to close). */
    FencedWriter writer() {
        return writer;
    }

    Duration negotiatedSessionTimeout() {
        return negotiated;
    }

    Duration grace() {
        return grace;
    }

    PlacementPolicy policy() {
        return policy;
    }

    /** Whether the start took the watcher's view (proven current) or scanned, and why; null before it got there. */
    TreeFollower.Proof proof() {
        return proof;
    }

    /** What the steps cost; null until the start completed. */
    Timings timings() {
        return timings;
    }
}
