package io.pidpool.server.zk;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only way a leader writes to the PidPool tree: every write travels in a ZooKeeper multi-op that
 * begins with {@code check(/epoch, epochVersion)}, so a deposed leader cannot change anything once a
 * successor has bumped the epoch.
 *
 * <p>Callers submit <em>units</em> (a list of {@link ZkWrite}s that must commit together, e.g. "create
 * the pids node and point the instance at it"). Units are queued and packed into multi-ops of at most
 * {@code maxOpsPerMulti} operations ({@link UnitQueue}), several of which may be in flight at once
 * (pipelined: ZooKeeper applies one session's requests in order). Nothing here is a synchronous round
 * trip per node. This class decides what an answer means for the term (the states below); {@link
 * MultiOpBatch} maps an answer back to the units it carried. The states, the in-flight count and the
 * outcome rules stay together here: they are one protocol, whose guarantees (queue order, fencing
 * once, nothing sent after a refusal) hold under its one lock.
 *
 * <p>Outcomes, per unit:
 *
 * <ul>
 *   <li>committed: the future completes with one {@link WriteResult} per write (creates use create2,
 *       so they carry the new node's stat);
 *   <li>the epoch check failed (BADVERSION or NONODE on {@code /epoch}) or the session is not the one
 *       that won the election: every queued and later unit fails with {@link ErrorCode#FENCED} and
 *       the fenced listener runs once, so the leader steps down;
 *   <li>one write of the multi-op failed (e.g. BADVERSION on a node an SDK changed meanwhile): that
 *       unit fails with the translated code and the other units of the same multi-op, which were not
 *       applied, are sent again; each round removes at least one unit, so this terminates. ZooKeeper
 *       names only the first failing operation, so the units behind it are resent in multi-ops of half
 *       the size (bisection): k stale units among n cost O(k log n) round trips, not k full resends;
 *   <li>connection loss or timeout: every unit of the multi-op fails with {@link ErrorCode#UNAVAILABLE}:
 *       the outcome is unknown and the caller must re-read before deciding again.
 * </ul>
 *
 * <p>It talks to ZooKeeper through a {@link MultiOpSession} ({@link ZooKeeperMultiOps} in production),
 * so that the protocol simulation drives this class itself.
 *
 * <p>Concurrency: thread-safe. {@code lock} guards the queue, the in-flight count and the state;
 * {@code sendOrder} makes taking a batch and handing it to ZooKeeper one step, so multi-ops leave in
 * queue order whichever thread flushes;
 * ZooKeeper's event thread runs the callbacks. Futures are completed outside the lock, so callers
 * should attach their continuations with an executor of their own ({@code whenCompleteAsync}).
 */
public final class FencedWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FencedWriter.class);
    /** Well below ZooKeeper's default jute.maxbuffer (1 MiB) for one request. */
    private static final int MAX_BYTES_PER_MULTI = 512 * 1024;

    private enum State {
        OPEN,
        PAUSED,
        FENCED,
        CLOSED
    }

    private record Completion(CompletableFuture<List<WriteResult>> future, List<WriteResult> value, Throwable error) {}

    private final MultiOpSession session;
    private final String epochPath;
    private final FenceToken token;
    private final int maxOpsPerMulti;
    private final int maxInFlight;
    private final Consumer<PidPoolException> onFenced;

    private final Object lock = new Object();
    /** Orders the sending of batches (see {@link #flush()}); taken before {@code lock}, never after. */
    private final Object sendOrder = new Object();

    private final UnitQueue queue;
    private int inFlight;
    private State state = State.OPEN;
    private PidPoolException fencedBy;

    private final AtomicLong multisSent = new AtomicLong();
    private final AtomicLong opsSent = new AtomicLong();
    private final AtomicLong resends = new AtomicLong();

    /**
     * @param zooKeeper the current ZooKeeper handle of the leader's client (it changes when a session
     *     is replaced; a handle of another session is refused)
     * @param namespace the Curator namespace without leading slash, e.g. {@code pidpool/default}
     * @param epochPath the epoch node, relative to the namespace
     * @param onFenced called once, from whichever thread detects it, when this term is fenced off
     */
    public FencedWriter(
            Supplier<ZooKeeper> zooKeeper,
            String namespace,
            String epochPath,
            FenceToken token,
            int maxOpsPerMulti,
            int maxInFlight,
            Consumer<PidPoolException> onFenced) {
        this(
                zooKeeper,
                namespace,
                epochPath,
                token,
                maxOpsPerMulti,
                maxInFlight,
                ZooDefs.Ids.OPEN_ACL_UNSAFE,
                onFenced);
    }

    /**
     * @param acl the ACL of every node this writer creates (the cluster's {@code ZkAuth.acl()}); the
     *     writes go through the raw handle, where Curator's ACL provider does not apply
     */
    public FencedWriter(
            Supplier<ZooKeeper> zooKeeper,
            String namespace,
            String epochPath,
            FenceToken token,
            int maxOpsPerMulti,
            int maxInFlight,
            List<ACL> acl,
            Consumer<PidPoolException> onFenced) {
        this(new ZooKeeperMultiOps(zooKeeper, namespace, acl), epochPath, token, maxOpsPerMulti, maxInFlight, onFenced);
    }

    /**
     * @param session the leader's ZooKeeper client
     * @param epochPath the epoch node, relative to the namespace
     * @param onFenced called once, from whichever thread detects it, when this term is fenced off
     */
    public FencedWriter(
            MultiOpSession session,
            String epochPath,
            FenceToken token,
            int maxOpsPerMulti,
            int maxInFlight,
            Consumer<PidPoolException> onFenced) {
        requireArgument(maxOpsPerMulti >= 2 && maxOpsPerMulti <= 1000, "maxOpsPerMulti", "must be within 2..1000");
        requireArgument(maxInFlight >= 1 && maxInFlight <= 64, "maxInFlight", "must be within 1..64");
        this.session = session;
        this.epochPath = epochPath;
        this.token = token;
        this.maxOpsPerMulti = maxOpsPerMulti;
        this.maxInFlight = maxInFlight;
        this.queue = new UnitQueue(maxOpsPerMulti, MAX_BYTES_PER_MULTI, epochPath.length());
        this.onFenced = onFenced;
    }

    public FenceToken token() {
        return token;
    }

    /**
     * Queues a unit of writes that must commit together. It is sent by {@link #flush()}, or as soon as
     * a full multi-op is queued.
     */
    public CompletableFuture<List<WriteResult>> submit(List<ZkWrite> writes) {
        if (writes.isEmpty() || writes.size() >= maxOpsPerMulti) { // not boxed per unit when it holds
            requireArgument(false, "writes", "a unit has 1..%d writes, got %d", maxOpsPerMulti - 1, writes.size());
        }
        var unit = new WriteUnit(List.copyOf(writes), new CompletableFuture<>(), maxOpsPerMulti);
        boolean full;
        synchronized (lock) {
            PidPoolException refusal = refusalLocked();
            if (refusal != null) {
                return CompletableFuture.failedFuture(refusal);
            }
            queue.add(unit);
            full = queue.ops() >= maxOpsPerMulti - 1;
        }
        if (full) {
            flush();
        }
        return unit.future();
    }

    /** Sends queued units, as many multi-ops as the in-flight limit allows; the rest follow as answers arrive. */
    public void flush() {
        List<Completion> completions = new ArrayList<>();
        // Held from taking a batch until ZooKeeper has queued it: the submitting thread and ZooKeeper's
        // event thread (flushing when a multi-op completes) may flush at once, and without it a later
        // batch could be queued before an earlier one (e.g. a share before its handshake).
        synchronized (sendOrder) {
            sendQueued(completions);
        }
        complete(completions);
    }

    private void sendQueued(List<Completion> completions) {
        while (true) {
            MultiOpBatch batch;
            synchronized (lock) {
                if (state != State.OPEN || queue.isEmpty() || inFlight >= maxInFlight) {
                    break;
                }
                long sessionId;
                try {
                    sessionId = session.sessionId();
                } catch (RuntimeException e) {
                    failAllLocked(PidPoolException.unavailable("no ZooKeeper connection", e), completions);
                    break;
                }
                if (sessionId != token.sessionId()) {
                    fenceLocked(
                            new PidPoolException(
                                    ErrorCode.FENCED,
                                    null,
                                    "leader session 0x" + Long.toHexString(token.sessionId()) + " is gone"),
                            completions);
                    break;
                }
                batch = new MultiOpBatch(queue.take());
                inFlight++;
            }
            send(batch);
        }
    }

    private void send(MultiOpBatch batch) {
        List<ZkWrite> ops = batch.ops(new ZkWrite.Check(epochPath, token.epochVersion()));
        multisSent.incrementAndGet();
        opsSent.addAndGet(ops.size());
        try {
            session.multi(ops, (rc, results) -> onResult(batch, rc, results));
        } catch (RuntimeException e) {
            log.warn("fenced multi-op could not be sent", e);
            onResult(batch, Code.CONNECTIONLOSS.intValue(), null);
        }
    }

    private void onResult(MultiOpBatch batch, int rc, List<MultiOpSession.OpOutcome> results) {
        List<Completion> completions = new ArrayList<>();
        synchronized (lock) {
            inFlight--;
            if (rc == Code.OK.intValue()) {
                batch.committed(
                        results,
                        (unit, unitResults) -> completions.add(new Completion(unit.future(), unitResults, null)));
            } else if (results != null && results.size() == batch.size()) {
                int failed = MultiOpBatch.firstFailure(results);
                int err = failed < 0 ? rc : results.get(failed).code();
                if (failed < 0) {
                    failUnitsLocked(batch.units(), ZkErrors.translate(rc, "fenced multi-op"), completions);
                } else if (failed == 0) {
                    fenceLocked(
                            new PidPoolException(
                                    ErrorCode.FENCED,
                                    null,
                                    "epoch " + token.epoch().value() + " was superseded (" + Code.get(err) + " on "
                                            + epochPath + ")"),
                            completions);
                    failUnitsLocked(batch.units(), null, completions);
                } else {
                    WriteUnit culprit = batch.unitAt(failed);
                    ZkWrite write = batch.writeAt(failed);
                    completions.add(new Completion(
                            culprit.future(), null, ZkErrors.translate(err, "write to " + write.path())));
                    resends.incrementAndGet();
                    // the other units were not applied: send them again, in their order, before the rest
                    requeueFrontLocked(batch.resendWithout(culprit), completions);
                }
            } else {
                PidPoolException error = ZkErrors.translate(rc, "fenced multi-op");
                if (error.code() == ErrorCode.FENCED) {
                    fenceLocked(error, completions);
                }
                failUnitsLocked(batch.units(), error, completions);
            }
        }
        complete(completions);
        flush();
    }

    private void requeueFrontLocked(List<WriteUnit> units, List<Completion> completions) {
        PidPoolException refusal = refusalLocked();
        if (refusal != null) {
            failUnitsLocked(units, refusal, completions);
            return;
        }
        queue.putFront(units);
    }

    private PidPoolException refusalLocked() {
        return switch (state) {
            case OPEN -> null;
            case PAUSED ->
                PidPoolException.unavailable("leader writes are paused (ZooKeeper connection suspended)", null);
            case FENCED -> fencedBy;
            case CLOSED -> new PidPoolException(ErrorCode.FENCED, "this leadership term is over");
        };
    }

    private void fenceLocked(PidPoolException cause, List<Completion> completions) {
        if (state == State.FENCED || state == State.CLOSED) {
            return;
        }
        state = State.FENCED;
        fencedBy = cause;
        failAllLocked(cause, completions);
        completions.add(new Completion(null, null, cause)); // marker: tell the listener outside the lock
    }

    private void failAllLocked(PidPoolException cause, List<Completion> completions) {
        for (WriteUnit unit : queue.drain()) {
            completions.add(new Completion(unit.future(), null, cause));
        }
    }

    private void failUnitsLocked(List<WriteUnit> units, PidPoolException cause, List<Completion> completions) {
        PidPoolException error = cause != null ? cause : fencedBy;
        for (WriteUnit unit : units) {
            completions.add(new Completion(unit.future(), null, error));
        }
    }

    private void complete(List<Completion> completions) {
        for (Completion c : completions) {
            if (c.future() == null) {
                log.warn("leader writes fenced off: {}", c.error().getMessage());
                try {
                    onFenced.accept((PidPoolException) c.error());
                } catch (RuntimeException e) {
                    log.error("fenced listener failed", e);
                }
            } else if (c.error() != null) {
                c.future().completeExceptionally(c.error());
            } else {
                c.future().complete(c.value());
            }
        }
    }

    /**
     * Stops sending (the leader's connection is SUSPENDED): queued units fail with
     * {@link ErrorCode#UNAVAILABLE}, new ones are refused until {@link #resume()}. Multi-ops already sent
     * complete or fail on their own.
     */
    public void pause() {
        List<Completion> completions = new ArrayList<>();
        synchronized (lock) {
            if (state != State.OPEN) {
                return;
            }
            state = State.PAUSED;
            failAllLocked(refusalLocked(), completions);
        }
        complete(completions);
    }

    public void resume() {
        synchronized (lock) {
            if (state == State.PAUSED) {
                state = State.OPEN;
            }
        }
    }

    public boolean isFenced() {
        synchronized (lock) {
            return state == State.FENCED;
        }
    }

    /** Multi-ops sent so far (each with its epoch check). */
    public long multisSent() {
        return multisSent.get();
    }

    /** Operations sent so far, epoch checks included. */
    public long opsSent() {
        return opsSent.get();
    }

    /** Multi-ops that failed on one unit's write and whose other units were sent again. */
    public long partialFailures() {
        return resends.get();
    }

    /** Ends the term: queued and later units fail with {@link ErrorCode#FENCED}; the listener is not called. */
    @Override
    public void close() {
        List<Completion> completions = new ArrayList<>();
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            state = State.CLOSED;
            failAllLocked(refusalLocked(), completions);
        }
        complete(completions);
    }
}
