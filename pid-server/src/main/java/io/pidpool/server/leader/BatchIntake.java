package io.pidpool.server.leader;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.protocol.NotifySignal;
import io.pidpool.server.zk.ZkWrite;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A term's intake of operator batches: applies the unfinished ones, oldest first, each exactly once
 * ({@link BatchApplier}, in the database under the term's epoch); hands the limits a batch changed to
 * the quota ledger, replays its changes into the {@link DbView} and asks for a full pass; and wakes
 * the batch's waiters on every server with {@code DEALED} on {@code /notify}.
 *
 * <p>Concurrency: the term's serial executor; the writes to {@code /notify} complete there.
 */
final class BatchIntake {
    /** The term's lines keep one logger name, whichever part of the term writes them. */
    private static final Logger log = LoggerFactory.getLogger(LeaderTerm.class);

    private static final int BATCHES_PER_ROUND = 16;
    private static final int NOTIFY_ATTEMPTS = 3;

    private final NodeContext ctx;
    private final BatchApplier batches;
    private final DbView db;
    private final PassPacing pacing;
    private final LeaderTerm term;
    /** Whether {@code /notify} existed when last seen: chooses create or setData for DEALED. */
    private boolean notifyExists;

    BatchIntake(NodeContext ctx, DbView db, PassPacing pacing, LeaderTerm term) {
        this.ctx = ctx;
        this.batches = new BatchApplier(
                ctx.repositories(), ctx.batchHook(), ctx.quota().resetLog(), ctx.clock());
        this.db = db;
        this.pacing = pacing;
        this.term = term;
    }

    /** Looks whether {@code /notify} exists, before the first batch is applied. */
    void begin() {
        notifyExists = exists(ctx.layout().notifyNode());
    }

    private boolean exists(String path) {
        try {
            return ctx.client().checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not read " + path, e);
        }
    }

    /**
     * Applies unfinished batches, oldest first (woken by {@code /notify}, and on a schedule because
     * the notification may be missed). Each is applied exactly once (see {@link BatchApplier}).
     *
     * @param recorded a batch this server has just recorded, or {@code null}: if it is the only one
     *     waiting it is applied as recorded, not read back (its operations never change, and the
     *     apply checks its status and epoch under the row lock)
     */
    void poll(BatchRecord recorded) {
        if (!term.serving()) {
            return;
        }
        List<BatchRecord> unfinished = unfinished(recorded);
        for (BatchRecord batch : unfinished) {
            if (!term.serving()) {
                return;
            }
            // every log line while the batch is handled carries its id (MDC "batchId", logback.xml)
            try (var mdc = org.slf4j.MDC.putCloseable("batchId", batch.id().toString())) {
                Optional<BatchApplier.Applied> applied = batches.apply(batch, term.epoch());
                if (applied.isEmpty()) {
                    log.info("batch {} was already applied", batch.id());
                    continue;
                }
                provisionQuota(applied.get());
                applied.get().changes().forEach(db::replay);
                pacing.requestFull(); // the database view changed
                log.info(
                        "applied batch {} ({}): {}",
                        batch.id(),
                        applied.get().batch().status(),
                        applied.get().batch().results());
                notifyDealed(batch.id());
            }
            term.requestPassNow();
        }
        if (unfinished.size() == BATCHES_PER_ROUND) {
            ctx.serial().execute(() -> term.guarded(() -> poll(null)));
        }
    }

    private List<BatchRecord> unfinished(BatchRecord recorded) {
        var operations = ctx.repositories().operations();
        if (recorded != null && operations.findUnfinishedIds(BATCHES_PER_ROUND).equals(List.of(recorded.id()))) {
            return List.of(recorded);
        }
        return operations.findUnfinished(BATCHES_PER_ROUND);
    }

    /**
     * After the commit: the limits the batch changed (ADD, UPDATE: monthly quota + overage; DELETE: 0;
     * a MIGRATE or an UPDATE that keeps the limit: nothing) and its resets go to the quota ledger. If
     * Redis is down they wait in {@link QuotaSync}, and the periodic reconciliation repairs limits
     * even if this process dies first.
     */
    private void provisionQuota(BatchApplier.Applied applied) {
        Map<String, Long> limits = new LinkedHashMap<>();
        for (DbChange change : applied.changes()) {
            if (change instanceof DbChange.PidPut put) {
                PidRecord before = db.pid(put.pid().id());
                if (before == null || before.hardLimit() != put.pid().hardLimit()) {
                    limits.put(put.pid().id(), put.pid().hardLimit());
                }
            } else if (change instanceof DbChange.PidRemoved removed) {
                limits.put(removed.pidId(), 0L);
            }
        }
        ctx.quota()
                .committed(
                        limits,
                        applied.quotaResets(),
                        applied.recordedResets(),
                        ctx.clock().instant());
    }

    /**
     * Writes {@code DEALED|id} to {@code /notify} with create-or-set semantics: {@link #notifyExists}
     * is only a guess (a follower may create the node after the term looked, or someone may delete
     * it), so a create that meets NODEEXISTS is sent again at once as a setData, and a setData that
     * meets NONODE as a create. Waiters on every server are woken by this write; losing it would
     * leave them to their poll.
     */
    private void notifyDealed(BatchId id) {
        notifyDealed(id, notifyExists, NOTIFY_ATTEMPTS);
    }

    private void notifyDealed(BatchId id, boolean asSet, int attemptsLeft) {
        byte[] data = new NotifySignal(NotifySignal.Phase.DEALED, id).encode();
        String path = ctx.layout().notifyNode();
        ZkWrite write = asSet ? new ZkWrite.SetData(path, data, -1) : ZkWrite.persistent(path, data);
        term.writer()
                .submit(List.of(write))
                .whenCompleteAsync(
                        (done, error) -> {
                            if (error == null) {
                                notifyExists = true;
                                return;
                            }
                            if (term.isClosed()) {
                                return;
                            }
                            ErrorCode code = LeaderTerm.unwrap(error).code();
                            boolean wrongGuess = asSet ? code == ErrorCode.NOT_FOUND : code == ErrorCode.CONFLICT;
                            if (wrongGuess) {
                                notifyExists = !asSet;
                                if (attemptsLeft > 1) {
                                    notifyDealed(id, !asSet, attemptsLeft - 1);
                                    return;
                                }
                            }
                            // waiters poll the database too; only the wake-up is lost
                            log.info(
                                    "could not signal DEALED for batch {}: {}",
                                    id,
                                    LeaderTerm.unwrap(error).getMessage());
                        },
                        ctx.serial());
        term.writer().flush();
    }
}
