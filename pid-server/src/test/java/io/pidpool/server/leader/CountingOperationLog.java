package io.pidpool.server.leader;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.PendingEffect;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An {@link OperationLog} that counts the reads of whole batches ({@link #find} and {@link
 * #findUnfinished}) and of statuses, and passes every call, the cheaper ones included, to the log
 * it wraps.
 */
final class CountingOperationLog implements OperationLog {
    final AtomicInteger finds = new AtomicInteger();
    final AtomicInteger unfinishedReads = new AtomicInteger();
    final AtomicInteger statusReads = new AtomicInteger();
    private final OperationLog log;

    CountingOperationLog(OperationLog log) {
        this.log = log;
    }

    @Override
    public void append(BatchRecord batch) {
        log.append(batch);
    }

    @Override
    public void append(BatchRecord batch, BatchKey key) {
        log.append(batch, key);
    }

    @Override
    public Optional<BatchKey> findKey(String requestedBy, IdempotencyKey key) {
        return log.findKey(requestedBy, key);
    }

    @Override
    public Optional<BatchRecord> find(BatchId id) {
        finds.incrementAndGet();
        return log.find(id);
    }

    @Override
    public Optional<BatchStatus> findStatus(BatchId id) {
        statusReads.incrementAndGet();
        return log.findStatus(id);
    }

    @Override
    public List<BatchRecord> findUnfinished(int limit) {
        unfinishedReads.incrementAndGet();
        return log.findUnfinished(limit);
    }

    @Override
    public List<BatchId> findUnfinishedIds(int limit) {
        return log.findUnfinishedIds(limit);
    }

    @Override
    public List<PendingEffect> pendingEffects(Set<String> pidIds, int limit) {
        return log.pendingEffects(pidIds, limit);
    }

    @Override
    public List<BatchRecord> recent(int limit) {
        return log.recent(limit);
    }

    @Override
    public BatchRecord transition(BatchId id, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        return log.transition(id, next, results, epoch);
    }

    @Override
    public BatchRecord transition(BatchRecord known, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        return log.transition(known, next, results, epoch);
    }
}
