package io.pidpool.server.leader;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.zk.ZkSupport;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.state.ConnectionState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link ClusterMember}'s place in the election at {@code /leader} and the life of its terms: joins
 * with a {@link LeaderLatch}, starts a {@link LeaderTerm} when elected, pauses it on SUSPENDED, resumes
 * or steps down on RECONNECTED (same session or not), ends it on LOST or when leadership is lost, and
 * after a failed term start leaves and joins again at the back of the queue.
 *
 * <p>Concurrency: owned by the node's serial executor (the latch's listener and the connection-state
 * listener run there); {@link #isLeading}, {@link #latch}, {@link #lastTermStart} and {@link
 * #lastAccountsSource} may be read from any thread.
 */
final class LeaderElection {
    private static final Logger log = LoggerFactory.getLogger(ClusterMember.class);
    private static final Duration REJOIN_DELAY = Duration.ofSeconds(1);

    private final NodeContext ctx;
    private final Runnable beforeTerm;
    /** Whether the node is started and not closed: no term starts and no rejoin happens otherwise. */
    private final BooleanSupplier started;

    private volatile LeaderLatch latch;
    private LeaderTerm term;
    private volatile boolean leading;
    private volatile TreeFollower.Proof lastTermStart;
    private volatile String lastAccountsSource;

    LeaderElection(NodeContext ctx, Runnable beforeTerm, BooleanSupplier started) {
        this.ctx = ctx;
        this.beforeTerm = beforeTerm;
        this.started = started;
    }

    /** The current term, or null when the node does not lead (serial executor only). */
    LeaderTerm term() {
        return term;
    }

    /** Whether this node currently leads and has finished its election steps. */
    boolean isLeading() {
        return leading;
    }

    /** The latch of the node's current place in the election, or null between leaving and rejoining. */
    LeaderLatch latch() {
        return latch;
    }

    /** How the last term of this node started (proven view or the reason it scanned); null if none did. */
    TreeFollower.Proof lastTermStart() {
        return lastTermStart;
    }

    /** Where the last term took its accounts from (full load or warm copy). */
    String lastAccountsSource() {
        return lastAccountsSource;
    }

    void join() {
        String nodeId = ctx.nodeId();
        latch = new LeaderLatch(ctx.client(), ctx.layout().leader(), nodeId);
        LeaderLatch mine = latch;
        latch.addListener(
                new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        if (latch == mine) {
                            becomeLeader();
                        }
                    }

                    @Override
                    public void notLeader() {
                        if (latch == mine) {
                            endTerm("leadership lost");
                        }
                    }
                },
                ctx.serial());
        try {
            latch.start();
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not join the election", e);
        }
    }

    private void becomeLeader() {
        if (!started.getAsBoolean() || term != null || !latch.hasLeadership()) {
            return;
        }
        LeaderTerm candidate = new LeaderTerm(ctx, cause -> stepDown(cause.getMessage()));
        term = candidate;
        try {
            beforeTerm.run();
            try {
                candidate.begin();
            } finally {
                lastTermStart = candidate.viewProof();
                lastAccountsSource = candidate.accountsSource();
            }
            leading = true;
        } catch (RuntimeException e) {
            if (started.getAsBoolean()) {
                log.error("{} could not take up leadership: {}", ctx.nodeId(), e.getMessage(), e);
            } else {
                // the node is closing: its close interrupted the steps, nothing went wrong
                log.info("{} closing: gave up taking up leadership ({})", ctx.nodeId(), e.getMessage());
            }
            stepDown("election steps failed: " + e.getMessage());
        }
    }

    void endTerm(String why) {
        leading = false;
        if (term != null) {
            log.info("{}: {}", ctx.nodeId(), why);
            term.close();
            term = null;
            ctx.warm().resume();
        }
    }

    /** Ends the term and leaves the election, then joins again at the back of the queue. */
    private void stepDown(String why) {
        endTerm("stepping down: " + why);
        if (!started.getAsBoolean()) {
            return;
        }
        try {
            LeaderLatch old = latch;
            latch = null;
            old.close();
        } catch (Exception e) {
            log.warn("{} could not leave the election cleanly: {}", ctx.nodeId(), e.getMessage());
        }
        // not at once: if the cause persists (say the database is down), every attempt would bump the
        // epoch again; a pause lets another node try first
        ctx.serial()
                .schedule(
                        () -> {
                            if (started.getAsBoolean() && latch == null) {
                                join();
                            }
                        },
                        REJOIN_DELAY.toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    void onConnectionState(ConnectionState newState) {
        log.info("{}: ZooKeeper connection {}", ctx.nodeId(), newState);
        switch (newState) {
            case SUSPENDED -> {
                if (term != null) {
                    term.suspend();
                }
            }
            case RECONNECTED -> {
                if (term != null) {
                    if (ZkSupport.sessionId(ctx.client()) != term.token().sessionId()) {
                        stepDown("the session changed");
                    } else {
                        term.resume();
                    }
                }
            }
            case LOST -> endTerm("ZooKeeper session lost");
            default -> {}
        }
    }

    /**
     * The node closes: not leading any more, and leaves the election from the calling thread (a
     * successor may be elected at once). The term itself ends with {@link #endTerm} once the serial
     * executor has stopped.
     */
    void leave() {
        leading = false;
        LeaderLatch current = latch;
        if (current != null) {
            try {
                current.close();
            } catch (Exception e) {
                log.warn("{} could not leave the election cleanly: {}", ctx.nodeId(), e.getMessage());
            }
        }
    }
}
