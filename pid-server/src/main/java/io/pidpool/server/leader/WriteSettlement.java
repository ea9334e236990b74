package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.NodeStat;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkWrite;
import java.util.List;

/**
 * What a leadership term does with the outcome of one sent write, apart from the reads it leads to:
 * the bookkeeping ({@link TermEvent#outcome}: an unknown outcome keeps the intent in doubt until a
 * rescan started after it proves the view), the view (a committed write's nodes are replayed from
 * its results), and the pacing (a failed write asks for a placement; an add or handshake the
 * placement counted needs none). The term then re-reads what {@link #settle} answers and asks for a
 * pass. Shared by {@link PassRunner} and the protocol simulation.
 *
 * <p>Concurrency: on the leader's serial executor, like the state it changes.
 */
final class WriteSettlement {
    /** What the term must re-read after an outcome. */
    enum Reread {
        /** Nothing: the write committed (its results are in the view). */
        NONE,
        /** The nodes the failed write touched: the view was wrong about them. */
        REFRESH,
        /** Everything: the outcome is unknown (the write may have landed). */
        RESCAN,
        /** Nothing, and no pass either: the term is fenced off (the writer reports it once). */
        FENCED
    }

    private WriteSettlement() {}

    /** @param failure {@code null} if the write committed */
    static Reread settle(
            Intent intent,
            List<WriteResult> results,
            PidPoolException failure,
            TermBookkeeping state,
            ZkView view,
            PassPacing pacing) {
        state.replay(TermEvent.outcome(intent, failure == null ? null : failure.code()));
        if (intent.pid() != null) {
            view.markDirty(intent.pid()); // a pass may have skipped it while the write was in flight
        }
        if (failure == null && intent.kind() == Intent.Kind.REVOKE) {
            intent.writes().forEach(w -> state.replay(new TermEvent.RevokeSent(w.path())));
        }
        if (failure != null) {
            if (failure.code() == ErrorCode.FENCED) {
                return Reread.FENCED;
            }
            pacing.requestPlacement();
            return failure.code() == ErrorCode.UNAVAILABLE ? Reread.RESCAN : Reread.REFRESH;
        }
        // the planner counted this add as in flight, and this live instance as ready: the add's node or
        // the handshake's pids node appearing changes nothing for it
        boolean placedBefore = pacing.placedAt(view.structureVersion());
        for (WriteResult result : results) {
            ZkWrite write = result.write();
            if (write instanceof ZkWrite.Create create && result.stat() != null) {
                view.replay(new NodeEvent.Upsert(create.path(), create.data(), result.stat()));
            } else if (write instanceof ZkWrite.SetData set && result.stat() != null) {
                view.replay(new NodeEvent.Upsert(set.path(), set.data(), result.stat()));
            } else if (write instanceof ZkWrite.Delete delete) {
                Long czxid = intent.deletedCzxids().get(delete.path());
                if (czxid != null) {
                    view.replay(new NodeEvent.Removed(delete.path(), new NodeStat(czxid, 0, 0, 0, 0, 0)));
                }
            }
        }
        boolean expected = intent.kind() == Intent.Kind.ADD || intent.kind() == Intent.Kind.HANDSHAKE;
        if (expected && placedBefore) {
            pacing.placed(view.structureVersion());
        }
        return Reread.NONE;
    }
}
