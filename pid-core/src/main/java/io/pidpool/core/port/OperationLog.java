package io.pidpool.core.port;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.OperationResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Operator batches (the operation record table): any server appends a batch, the leader
 * picks up unfinished batches oldest first, marks each DEALING and finally DEALED or FAILED together
 * with one result per operation. Transitions follow {@link BatchStatus#canFollow}. Every method is
 * atomic. Thread-safe.
 */
public interface OperationLog {
    /**
     * Stores a new batch.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} on {@code status} unless the batch is
     *     PENDING with epoch {@link Epoch#NONE}, {@code CONFLICT} on {@code id} if the id exists
     */
    void append(BatchRecord batch);

    /**
     * Stores a new batch together with its idempotency key, atomically: both or neither. The key's
     * {@link BatchKey#batch()} must be the batch's id and its {@code requestedBy} the batch's. Kept as
     * long as the batch.
     *
     * @throws PidPoolException as {@link #append}; {@code CONFLICT} on {@code Idempotency-Key} if the
     *     principal used the key before (then nothing is stored: read the earlier one with {@link
     *     #findKey})
     */
    void append(BatchRecord batch, BatchKey key);

    /** The batch {@code requestedBy} made with {@code key}, if any. */
    Optional<BatchKey> findKey(String requestedBy, IdempotencyKey key);

    Optional<BatchRecord> find(BatchId id);

    /**
     * The status of {@link #find}'s batch. An implementation may read only the status, for a caller
     * that waits for a large batch to finish and needs its operations once, at the end.
     */
    default Optional<BatchStatus> findStatus(BatchId id) {
        return find(id).map(BatchRecord::status);
    }

    /** PENDING and DEALING batches, oldest (smallest id) first, at most {@code limit}. */
    List<BatchRecord> findUnfinished(int limit);

    /**
     * The ids of {@link #findUnfinished}, in its order. An implementation may read only the ids,
     * for a caller that has the batches in hand.
     */
    default List<BatchId> findUnfinishedIds(int limit) {
        return findUnfinished(limit).stream().map(BatchRecord::id).toList();
    }

    /**
     * The effects of the unfinished batches ({@link #findUnfinished}: oldest first, at most {@code
     * limit} batches) on the PIDs {@code pidIds}: one entry per operation, in batch and operation
     * order, its PIDs cut down to those asked about. An implementation may read only those rows
     * instead of every PID of every waiting batch.
     */
    default List<PendingEffect> pendingEffects(Set<String> pidIds, int limit) {
        List<PendingEffect> effects = new ArrayList<>();
        for (BatchRecord batch : findUnfinished(limit)) {
            batch.operations().forEach(op -> effects.add(PendingEffect.of(op, pidIds)));
        }
        return effects;
    }

    /** The newest batches (largest id first, whatever their status), at most {@code limit}. */
    List<BatchRecord> recent(int limit);

    /**
     * Moves a batch to {@code next}, stamping the leader epoch, and stores {@code results} with it
     * atomically (empty for DEALING, one per operation for DEALED and FAILED).
     *
     * @return the batch as stored now
     * @throws PidPoolException {@code NOT_FOUND} on {@code id}, {@code FENCED} on {@code epoch} if a
     *     newer leader moved the batch, {@code ILLEGAL_STATE} if {@code next} may not follow the
     *     current status, {@code INVALID_ARGUMENT} on {@code results}
     */
    BatchRecord transition(BatchId id, BatchStatus next, List<OperationResult> results, Epoch epoch);

    /**
     * {@link #transition(BatchId, BatchStatus, List, Epoch)} for a caller that has read the batch
     * already: a batch's operations never change once appended, so an implementation may read only
     * its status and epoch again (under the same lock) and use {@code known} when they are unchanged,
     * instead of loading every PID of a large batch once more.
     */
    default BatchRecord transition(BatchRecord known, BatchStatus next, List<OperationResult> results, Epoch epoch) {
        return transition(known.id(), next, results, epoch);
    }

    /** Marks a batch DEALING: the leader of {@code epoch} is applying it. */
    default BatchRecord markDealing(BatchId id, Epoch epoch) {
        return transition(id, BatchStatus.DEALING, List.of(), epoch);
    }

    /** Marks a batch DEALED or FAILED with its per-operation results. */
    default BatchRecord finish(BatchId id, BatchStatus status, List<OperationResult> results, Epoch epoch) {
        return transition(id, status, results, epoch);
    }

    /** The error for a write by a leader older than the one that last moved the batch. */
    static PidPoolException fenced(BatchId id, Epoch stored, Epoch by) {
        return new PidPoolException(
                ErrorCode.FENCED,
                "epoch",
                String.format(
                        "batch %s was moved by epoch %d; epoch %d is fenced off", id, stored.value(), by.value()));
    }
}
