package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;
import java.util.HashSet;
import java.util.List;

/**
 * Operator requests accepted together by any server and applied by the leader in order, exactly
 * once. A batch is all-or-nothing at validation: one bad operation rejects the whole batch.
 *
 * @param results one per operation once the batch is final; empty before
 */
public record OperationBatch(
        BatchId id,
        List<Operation> operations,
        BatchStatus status,
        String requestedBy,
        Instant createdAt,
        List<OperationResult> results) {

    /** The most PIDs a whole batch may name. */
    public static final int MAX_PIDS = 10_000;

    public OperationBatch {
        requireNonNull(id, "id");
        operations = List.copyOf(requireNonNull(operations, "operations"));
        requireArgument(!operations.isEmpty(), "operations", "a batch needs at least one operation");
        requireNonNull(status, "status");
        requireNonNull(requestedBy, "requestedBy");
        requireNonNull(createdAt, "createdAt");
        results = results == null ? List.of() : List.copyOf(results);
        int total = operations.stream().mapToInt(op -> op.pidIds().size()).sum();
        requireArgument(total <= MAX_PIDS, "operations", "a batch names at most %d PIDs, got %d", MAX_PIDS, total);
        var seen = new HashSet<String>();
        for (Operation op : operations) {
            for (String pid : op.pidIds()) {
                requireArgument(
                        seen.add(pid), "operations", "PID %s appears in more than one operation of the batch", pid);
            }
        }
    }

    public static OperationBatch pending(BatchId id, List<Operation> operations, String requestedBy, Instant now) {
        return new OperationBatch(id, operations, BatchStatus.PENDING, requestedBy, now, List.of());
    }

    public OperationBatch withStatus(BatchStatus next, List<OperationResult> newResults) {
        return new OperationBatch(id, operations, next.assertCanFollow(status), requestedBy, createdAt, newResults);
    }
}
