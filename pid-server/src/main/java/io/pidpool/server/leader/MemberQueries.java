package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.server.zk.EpochFence;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.Participant;

/**
 * What a {@link ClusterMember} answers the HTTP layer, leader or not: the cluster (election, epoch,
 * members), modules and PIDs as the node's views see them ({@link ReadModel}). Reads of the views and
 * of the term run as tasks on the serial executor ({@link #call}); database reads run on the caller's
 * thread before.
 */
final class MemberQueries {
    private final NodeContext ctx;
    private final LeaderElection election;

    MemberQueries(NodeContext ctx, LeaderElection election) {
        this.ctx = ctx;
        this.election = election;
    }

    Epoch epoch() {
        return call(() -> election.term() == null ? Epoch.NONE : election.term().epoch());
    }

    Duration grace() {
        return call(() -> election.term() == null ? null : election.term().grace());
    }

    ReadModel.Cluster cluster() {
        String leaderId = "";
        List<String> members = new ArrayList<>();
        try {
            LeaderLatch current = call(election::latch);
            if (current != null) {
                Participant leader = current.getLeader();
                leaderId = leader.isLeader() ? leader.getId() : "";
                for (Participant p : current.getParticipants()) {
                    members.add(p.getId());
                }
            }
        } catch (PidPoolException e) {
            throw e;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not read the election", e);
        }
        Epoch epoch = EpochFence.read(ctx.client(), ctx.layout().epoch());
        return new ReadModel.Cluster(
                ctx.nodeId(),
                election.isLeading(),
                leaderId,
                epoch,
                List.copyOf(members),
                ctx.client().getZookeeperClient().isConnected());
    }

    List<ReadModel.Module> modules() {
        LeaderDatabase.Snapshot db = ctx.store().load();
        return call(() -> ReadModel.modules(db, ctx.view()));
    }

    ReadModel.Module module(ModuleKey key) {
        return modules().stream()
                .filter(m -> m.key().equals(key))
                .findFirst()
                .orElseThrow(() -> PidPoolException.notFound("module", "no module %s", key));
    }

    List<ReadModel.Pid> pids(ModuleKey module, PidState state) {
        LeaderDatabase.Snapshot db = ctx.store().load();
        return call(() -> ReadModel.pids(db.pids(), ctx.view(), module, state));
    }

    /** A one-line summary of the ZooKeeper view and the term (tests). */
    String describe() {
        return call(() -> {
            var counts = new java.util.TreeMap<String, Integer>();
            for (ZkView.PidEntry e : ctx.view().allPidNodes()) {
                String key = e.holder().instance() + ":"
                        + (e.node() == null
                                ? "MALFORMED"
                                : e.node().state() + (e.node().hasError() ? "!" : ""));
                counts.merge(key, 1, Integer::sum);
            }
            LeaderTerm term = election.term();
            return "leading=" + election.isLeading() + " writesInFlight="
                    + (term == null ? -1 : term.state().writesInFlight()) + " nodes=" + counts;
        });
    }

    /** Runs {@code query} on the serial executor and waits for its answer. */
    <T> T call(Callable<T> query) {
        String nodeId = ctx.nodeId();
        try {
            return ctx.serial().submit(query).get(ctx.settings().zkTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted", e);
        } catch (TimeoutException e) {
            throw PidPoolException.unavailable("node " + nodeId + " did not answer in time", e);
        } catch (RejectedExecutionException e) {
            throw new PidPoolException(ErrorCode.UNAVAILABLE, "node " + nodeId + " is closed");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PidPoolException p) {
                throw p;
            }
            throw new IllegalStateException(e.getCause());
        }
    }
}
