package io.pidpool.client.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the client's answers into its PID nodes (ADDED, UPDATED, DELETED, health reports: the
 * tracker's {@link Action.Write}s), each a setData at the version the answer was decided on.
 *
 * <ul>
 *   <li>writes are not sent one by one but collected until the tasks already queued on the state
 *       thread have run (no timer, no added delay), then sent together: answers that became due
 *       together travel in one multi-op (one request, one transaction), at most {@value
 *       #MAX_WRITES_PER_MULTI} per multi-op;
 *   <li>a write decided under an earlier registration is not sent (it fails at once);
 *   <li>a multi-op is all or nothing: the first refused write gets its own outcome, the others are
 *       sent again (each round settles at least one write, so this terminates);
 *   <li>a write refused for its version (the node changed meanwhile) reads the node again.
 * </ul>
 *
 * <p>Concurrency: state thread, except the answers, which arrive on the coordination's event thread
 * and are posted to the state thread.
 */
final class AckWriter {
    private static final Logger log = LoggerFactory.getLogger(AckWriter.class);

    /** Acknowledgements per multi-op: ~200 nodes of a few KB stay far below jute.maxbuffer. */
    static final int MAX_WRITES_PER_MULTI = 200;

    /** The registration writes go to: its generation (as in {@link Action.Write}) and session. */
    record Target(long generation, long sessionId) {}

    private final PidNodes nodes;
    private final PidTracker tracker;
    private final ClientLoop loop;
    private final LongSupplier clock;
    private final Supplier<Target> target;
    // state thread
    private final List<Action.Write> queued = new ArrayList<>();
    private boolean flushPosted;

    /**
     * @param clock the client's ticker (nanoseconds), for the lease's sent-at times
     * @param target the current registration, {@code null} while there is none
     */
    AckWriter(PidNodes nodes, PidTracker tracker, ClientLoop loop, LongSupplier clock, Supplier<Target> target) {
        this.nodes = nodes;
        this.tracker = tracker;
        this.loop = loop;
        this.clock = clock;
        this.target = target;
    }

    /** State thread: queue a write; the queue is sent once the tasks queued before it have run. */
    void queue(Action.Write w) {
        queued.add(w);
        if (!flushPosted) {
            flushPosted = true;
            loop.post("flushWrites", this::flush);
        }
    }

    private void flush() {
        flushPosted = false;
        List<Action.Write> due = new ArrayList<>(queued);
        queued.clear();
        for (int from = 0; from < due.size(); from += MAX_WRITES_PER_MULTI) {
            send(due.subList(from, Math.min(due.size(), from + MAX_WRITES_PER_MULTI)));
        }
    }

    /** State thread: one write alone, several in a multi-op of versioned setData. */
    private void send(List<Action.Write> writes) {
        Target t = target.get();
        List<Action.Write> valid = new ArrayList<>();
        for (Action.Write w : writes) {
            if (t == null || t.generation() != w.generation()) {
                loop.post(
                        "write dropped " + w.pid(),
                        () -> loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.FAILED, null)));
            } else {
                valid.add(w);
            }
        }
        if (valid.isEmpty()) {
            return;
        }
        if (valid.size() == 1) {
            write(valid.get(0), t.sessionId());
        } else {
            writeTogether(valid, t.sessionId());
        }
    }

    private void write(Action.Write w, long sessionId) {
        long sentAt = clock.getAsLong();
        try {
            nodes.setData(
                    w.path(),
                    w.node().encode(),
                    w.expectedVersion(),
                    (code, reply) -> onWriteResult(w, sessionId, sentAt, code, reply));
        } catch (Exception e) {
            log.warn("Could not write {} into {}: {}", w.node().state(), w.path(), e.toString());
            loop.post(
                    "write failed " + w.pid(),
                    () -> loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.FAILED, null)));
        }
    }

    private void writeTogether(List<Action.Write> writes, long sessionId) {
        long sentAt = clock.getAsLong();
        List<PidNodes.Write> ops = new ArrayList<>(writes.size());
        for (Action.Write w : writes) {
            ops.add(new PidNodes.Write(w.path(), w.node().encode(), w.expectedVersion()));
        }
        try {
            nodes.setDataTogether(ops, (rc, results) -> onWritesResult(writes, sessionId, sentAt, rc, results));
        } catch (Exception e) {
            log.warn("Could not write {} acknowledgements: {}", writes.size(), e.toString());
            loop.post(
                    "writes failed",
                    () -> writes.forEach(w -> loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.FAILED, null))));
        }
    }

    /** Coordination event thread. */
    private void onWritesResult(
            List<Action.Write> writes, long sessionId, long sentAt, Code rc, List<PidNodes.Reply> results) {
        if (rc == Code.OK && results != null && results.size() == writes.size()) {
            for (int i = 0; i < writes.size(); i++) {
                onWriteResult(writes.get(i), sessionId, sentAt, Code.OK, results.get(i));
            }
            return;
        }
        int failed = -1;
        for (int i = 0; results != null && i < results.size() && i < writes.size(); i++) {
            Code c = results.get(i).code();
            if (c != Code.OK && c != Code.RUNTIMEINCONSISTENCY) {
                failed = i;
                break;
            }
        }
        if (failed < 0) {
            // no answer about single writes (connection loss, timeout): every outcome is unknown
            writes.forEach(w -> onWriteResult(w, sessionId, sentAt, rc, null));
            return;
        }
        Action.Write refused = writes.get(failed);
        onWriteResult(refused, sessionId, sentAt, rc, null);
        List<Action.Write> rest = new ArrayList<>(writes);
        rest.remove(failed);
        if (!rest.isEmpty()) {
            loop.post("resend", () -> send(rest));
        }
    }

    /** Coordination event thread. */
    private void onWriteResult(Action.Write w, long sessionId, long sentAt, Code code, PidNodes.Reply reply) {
        switch (code) {
            case OK -> {
                loop.onReply(sessionId, sentAt);
                NodeView written = NodeView.of(w.generation(), w.path(), w.node(), reply.version(), reply.mzxid());
                log.debug("Wrote {} into {}", w.node().state(), w.path());
                loop.post("write ok " + w.pid(), () -> {
                    loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.OK, written));
                    loop.writeSettled(w.generation(), w.pid());
                });
            }
            case BADVERSION -> {
                loop.onReply(sessionId, sentAt);
                log.debug("{} changed before our answer landed; reading it again", w.path());
                loop.post("write stale " + w.pid(), () -> {
                    loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.BAD_VERSION, null));
                    reread(w.generation(), w.path());
                    loop.writeSettled(w.generation(), w.pid());
                });
            }
            case NONODE -> {
                loop.onReply(sessionId, sentAt);
                loop.post("write nonode " + w.pid(), () -> {
                    loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.NO_NODE, null));
                    loop.writeSettled(w.generation(), w.pid());
                });
            }
            default -> {
                log.warn("Could not write {} into {}: {}", w.node().state(), w.path(), code);
                loop.post("write failed " + w.pid(), () -> {
                    loop.apply(tracker.onWriteDone(w, PidTracker.WriteResult.FAILED, null));
                    loop.writeSettled(w.generation(), w.pid());
                });
            }
        }
    }

    /** State thread: fetch a node again after our versioned write was refused. */
    private void reread(long generation, String path) {
        loop.readSent(1);
        try {
            nodes.getData(path, (code, reply) -> loop.post("reread", () -> onReread(generation, path, code, reply)));
        } catch (Exception e) {
            loop.readAnswered();
            log.warn("Could not re-read {}: {}", path, e.toString());
        }
    }

    private void onReread(long generation, String path, Code code, PidNodes.Reply reply) {
        loop.readAnswered();
        if (code == Code.OK && reply != null && reply.version() >= 0) {
            loop.apply(tracker.onNode(NodeView.read(generation, path, reply.data(), reply.version(), reply.mzxid())));
        } else if (code == Code.NONODE) {
            loop.apply(tracker.onNodeDeleted(generation, PidsWatch.name(path)));
        } else {
            loop.apply(List.of());
        }
    }
}
