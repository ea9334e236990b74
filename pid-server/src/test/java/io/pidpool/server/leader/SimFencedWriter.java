package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.sim.SimZooKeeper;
import io.pidpool.core.sim.SimZooKeeper.Code;
import io.pidpool.server.zk.FenceToken;
import io.pidpool.server.zk.NodeStat;
import io.pidpool.server.zk.WriteResult;
import io.pidpool.server.zk.ZkErrors;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.zookeeper.KeeperException;

/**
 * {@link io.pidpool.server.zk.FencedWriter} over a {@link SimZooKeeper.Client}, step for step: units
 * queued and packed into multi-ops that begin with {@code check(/epoch, version)}, several in flight,
 * sent in queue order; a failed epoch check (or another session) fences every queued and later unit;
 * one failed write fails its unit and sends the others again in halved multi-ops; a connection loss
 * fails every unit of the multi-op with UNAVAILABLE (outcome unknown); pause/resume/close.
 *
 * <p>A copy, not the class: the production writer talks to {@code org.apache.zookeeper.ZooKeeper}
 * directly. Once it talks to a port, the simulation should drive the real one.
 *
 * <p>Concurrency: single-threaded on the simulation's scheduler.
 */
final class SimFencedWriter {
    private enum State {
        OPEN,
        PAUSED,
        FENCED,
        CLOSED
    }

    private static final class Unit {
        final List<ZkWrite> writes;
        final CompletableFuture<List<WriteResult>> future = new CompletableFuture<>();
        int cap;

        Unit(List<ZkWrite> writes, int cap) {
            this.writes = writes;
            this.cap = cap;
        }
    }

    private final SimZooKeeper.Client zk;
    private final String epochPath;
    private final FenceToken token;
    private final int maxOpsPerMulti;
    private final int maxInFlight;
    private final Consumer<PidPoolException> onFenced;
    private final ArrayDeque<Unit> queue = new ArrayDeque<>();
    private int queuedOps;
    private int inFlight;
    private State state = State.OPEN;
    private PidPoolException fencedBy;

    SimFencedWriter(
            SimZooKeeper.Client zk,
            String epochPath,
            FenceToken token,
            int maxOpsPerMulti,
            int maxInFlight,
            Consumer<PidPoolException> onFenced) {
        this.zk = zk;
        this.epochPath = epochPath;
        this.token = token;
        this.maxOpsPerMulti = maxOpsPerMulti;
        this.maxInFlight = maxInFlight;
        this.onFenced = onFenced;
    }

    FenceToken token() {
        return token;
    }

    CompletableFuture<List<WriteResult>> submit(List<ZkWrite> writes) {
        PidPoolException refusal = refusal();
        if (refusal != null) {
            return CompletableFuture.failedFuture(refusal);
        }
        Unit unit = new Unit(List.copyOf(writes), maxOpsPerMulti);
        queue.addLast(unit);
        queuedOps += writes.size();
        if (queuedOps >= maxOpsPerMulti - 1) {
            flush();
        }
        return unit.future;
    }

    void flush() {
        while (state == State.OPEN && !queue.isEmpty() && inFlight < maxInFlight) {
            if (zk.lastSessionId() != token.sessionId()) {
                fence(new PidPoolException(
                        ErrorCode.FENCED,
                        null,
                        "leader session 0x" + Long.toHexString(token.sessionId()) + " is gone"));
                return;
            }
            List<Unit> batch = takeBatch();
            inFlight++;
            send(batch);
        }
    }

    private List<Unit> takeBatch() {
        List<Unit> batch = new ArrayList<>();
        int ops = 1;
        int cap = maxOpsPerMulti;
        while (!queue.isEmpty()) {
            Unit next = queue.peekFirst();
            int capWith = Math.min(cap, next.cap);
            if (!batch.isEmpty() && ops + next.writes.size() > capWith) {
                break;
            }
            queue.pollFirst();
            queuedOps -= next.writes.size();
            batch.add(next);
            ops += next.writes.size();
            cap = capWith;
        }
        return batch;
    }

    private void send(List<Unit> batch) {
        List<SimZooKeeper.Op> ops = new ArrayList<>();
        ops.add(new SimZooKeeper.Check(epochPath, token.epochVersion()));
        for (Unit unit : batch) {
            for (ZkWrite write : unit.writes) {
                ops.add(toOp(write));
            }
        }
        zk.multi(ops, (code, results) -> onResult(batch, code, results));
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

    static PidPoolException translate(Code code, String what) {
        return ZkErrors.translate(KeeperException.Code.valueOf(code.name()), what, null);
    }

    private void onResult(List<Unit> batch, Code rc, List<SimZooKeeper.OpResult> results) {
        inFlight--;
        if (rc == Code.OK) {
            int index = 1;
            for (Unit unit : batch) {
                List<WriteResult> unitResults = new ArrayList<>();
                for (ZkWrite write : unit.writes) {
                    SimZooKeeper.Stat st = results.get(index++).stat();
                    NodeStat stat = st == null
                            ? null
                            : new NodeStat(
                                    st.czxid(),
                                    st.mzxid(),
                                    st.pzxid(),
                                    st.version(),
                                    st.ephemeralOwner(),
                                    st.numChildren());
                    unitResults.add(new WriteResult(write, write instanceof ZkWrite.Delete ? null : stat));
                }
                unit.future.complete(unitResults);
            }
        } else if (results != null) {
            int failed = -1;
            for (int i = 0; i < results.size(); i++) {
                Code c = results.get(i).code();
                if (c != Code.OK && c != Code.RUNTIMEINCONSISTENCY) {
                    failed = i;
                    break;
                }
            }
            if (failed <= 0) {
                fence(new PidPoolException(
                        ErrorCode.FENCED,
                        null,
                        "epoch " + token.epoch().value() + " was superseded (" + rc + " on " + epochPath + ")"));
                for (Unit unit : batch) {
                    unit.future.completeExceptionally(fencedBy);
                }
            } else {
                int index = 1;
                Unit culprit = null;
                for (Unit unit : batch) {
                    if (failed < index + unit.writes.size()) {
                        culprit = unit;
                        break;
                    }
                    index += unit.writes.size();
                }
                ZkWrite write = culprit.writes.get(failed - index);
                culprit.future.completeExceptionally(
                        translate(results.get(failed).code(), "write to " + write.path()));
                int ops = batch.stream().mapToInt(u -> u.writes.size()).sum();
                int half = Math.max(2, (ops + 1) / 2);
                List<Unit> again = new ArrayList<>();
                boolean after = false;
                for (Unit unit : batch) {
                    if (unit == culprit) {
                        after = true;
                    } else {
                        if (after) {
                            unit.cap = Math.min(unit.cap, half);
                        }
                        again.add(unit);
                    }
                }
                PidPoolException refusal = refusal();
                if (refusal != null) {
                    again.forEach(u -> u.future.completeExceptionally(refusal));
                } else {
                    for (int i = again.size() - 1; i >= 0; i--) {
                        queue.addFirst(again.get(i));
                        queuedOps += again.get(i).writes.size();
                    }
                }
            }
        } else {
            PidPoolException error = translate(rc, "fenced multi-op");
            if (error.code() == ErrorCode.FENCED) {
                fence(error);
            }
            for (Unit unit : batch) {
                unit.future.completeExceptionally(error);
            }
        }
        flush();
    }

    private PidPoolException refusal() {
        return switch (state) {
            case OPEN -> null;
            case PAUSED ->
                PidPoolException.unavailable("leader writes are paused (ZooKeeper connection suspended)", null);
            case FENCED -> fencedBy;
            case CLOSED -> new PidPoolException(ErrorCode.FENCED, "this leadership term is over");
        };
    }

    private void fence(PidPoolException cause) {
        if (state == State.FENCED || state == State.CLOSED) {
            return;
        }
        state = State.FENCED;
        fencedBy = cause;
        failAll(cause);
        onFenced.accept(cause);
    }

    private void failAll(PidPoolException cause) {
        List<Unit> units = new ArrayList<>(queue);
        queue.clear();
        queuedOps = 0;
        units.forEach(u -> u.future.completeExceptionally(cause));
    }

    void pause() {
        if (state != State.OPEN) {
            return;
        }
        state = State.PAUSED;
        failAll(refusal());
    }

    void resume() {
        if (state == State.PAUSED) {
            state = State.OPEN;
        }
    }

    void close() {
        if (state == State.CLOSED) {
            return;
        }
        state = State.CLOSED;
        failAll(refusal());
    }
}
