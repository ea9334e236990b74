package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * An operator batch as the {@link OperationLog} stores it (the operation record): its
 * operations with sealed secrets, where it is in {@code PENDING -> DEALING -> DEALED | FAILED}, the
 * epoch of the leader that last moved it ({@link Epoch#NONE} while pending) and, once final, one
 * result per operation. Instants are kept to the millisecond.
 */
public record BatchRecord(
        BatchId id,
        List<Operation<SealedSecret>> operations,
        BatchStatus status,
        String requestedBy,
        Instant createdAt,
        Instant updatedAt,
        Epoch epoch,
        List<OperationResult> results) {

    public BatchRecord {
        requireNonNull(id, "id");
        operations = OperationBatch.requireOperations(operations);
        operations.forEach(BatchRecord::requireStorable);
        requireNonNull(status, "status");
        requireNonNull(requestedBy, "requestedBy");
        requireArgument(
                !requestedBy.isEmpty() && requestedBy.length() <= StorageLimits.MAX_ACTOR,
                "requestedBy",
                "requestedBy must be 1..%d characters",
                StorageLimits.MAX_ACTOR);
        createdAt = StorageLimits.stored(requireNonNull(createdAt, "createdAt"));
        updatedAt = StorageLimits.stored(requireNonNull(updatedAt, "updatedAt"));
        requireNonNull(epoch, "epoch");
        results = results(status, operations.size(), results);
    }

    /** What the store adds to the operation's own rules: sealed secrets and attributes that fit it. */
    private static void requireStorable(Operation<SealedSecret> operation) {
        for (PidSpec<SealedSecret> spec : operation.specs()) {
            if (spec.secret() != null) {
                StorageLimits.requireSecret(spec.secret(), "pids.secret");
            }
            StorageLimits.requireAttributes(spec.attributes(), "pids.attributes");
        }
    }

    /** A new pending batch. */
    public static BatchRecord pending(
            BatchId id, List<Operation<SealedSecret>> operations, String requestedBy, Instant now) {
        return new BatchRecord(id, operations, BatchStatus.PENDING, requestedBy, now, now, Epoch.NONE, List.of());
    }

    /** A pending {@link OperationBatch} with its passwords sealed by {@code sealer}. */
    public static BatchRecord pending(OperationBatch batch, Function<String, SealedSecret> sealer) {
        requireArgument(
                batch.status() == BatchStatus.PENDING,
                "status",
                "only a PENDING batch can be recorded, was %s",
                batch.status());
        return pending(
                batch.id(),
                batch.operations().stream()
                        .map(op -> op.<SealedSecret>withSecrets(sealer))
                        .toList(),
                batch.requestedBy(),
                batch.createdAt());
    }

    /**
     * This batch moved to {@code next} by the leader of {@code by}, checked against
     * {@link BatchStatus#canFollow} ({@code ILLEGAL_STATE}) and the fence ({@code FENCED} if this
     * batch was last moved by a newer epoch).
     */
    public BatchRecord transition(BatchStatus next, List<OperationResult> newResults, Epoch by, Instant now) {
        requireNonNull(next, "status");
        requireNonNull(by, "epoch");
        if (by.isOlderThan(epoch)) {
            throw OperationLog.fenced(id, epoch, by);
        }
        next.assertCanFollow(status);
        return new BatchRecord(id, operations, next, requestedBy, createdAt, now, by, newResults);
    }

    /** Results must be empty before the batch is final and one per operation, in order, after. */
    private static List<OperationResult> results(BatchStatus status, int operations, List<OperationResult> results) {
        List<OperationResult> copy = results == null ? new ArrayList<>() : new ArrayList<>(results);
        if (!status.isFinal()) {
            requireArgument(copy.isEmpty(), "results", "a %s batch has no results yet, got %d", status, copy.size());
            return List.of();
        }
        requireArgument(
                copy.size() == operations,
                "results",
                "a %s batch needs one result per operation: %d, got %d",
                status,
                operations,
                copy.size());
        for (int i = 0; i < copy.size(); i++) {
            OperationResult r = requireNonNull(copy.get(i), "results");
            requireArgument(r.index() == i, "results", "result %d carries index %d", i, r.index());
            String message = r.message() == null ? "" : r.message();
            copy.set(i, new OperationResult(i, r.ok(), StorageLimits.cut(message, StorageLimits.MAX_RESULT_MESSAGE)));
        }
        return List.copyOf(copy);
    }
}
