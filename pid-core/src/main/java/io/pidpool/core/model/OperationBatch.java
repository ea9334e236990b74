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
        List<Operation<String>> operations,
        BatchStatus status,
        String requestedBy,
        Instant createdAt,
        List<OperationResult> results) {

    /** The most PIDs a whole batch may name. */
    public static final int MAX_PIDS = 10_000;

    public OperationBatch {
        requireNonNull(id, "id");
        operations = requireOperations(operations);
        requireNonNull(status, "status");
        requireNonNull(requestedBy, "requestedBy");
        requireNonNull(createdAt, "createdAt");
        results = results == null ? List.of() : List.copyOf(results);
    }

    /**
     * The rules of a batch's operations, whatever form their secrets take (also for the stored form):
     * at least one, at most {@link #MAX_PIDS} PIDs named in all, no PID in two operations.
     *
     * @return an immutable copy
     */
    public static <O extends Operation<?>> List<O> requireOperations(List<O> operations) {
        List<O> copy = List.copyOf(requireNonNull(operations, "operations"));
        requireArgument(!copy.isEmpty(), "operations", "a batch needs at least one operation");
        int total = copy.stream().mapToInt(op -> op.pidIds().size()).sum();
        requireArgument(total <= MAX_PIDS, "operations", "a batch names at most %d PIDs, got %d", MAX_PIDS, total);
        var seen = new HashSet<String>();
        for (O op : copy) {
            for (String pid : op.pidIds()) {
                requireArgument(
                        seen.add(pid), "operations", "PID %s appears in more than one operation of the batch", pid);
            }
        }
        return copy;
    }

    public static OperationBatch pending(
            BatchId id, List<Operation<String>> operations, String requestedBy, Instant now) {
        return new OperationBatch(id, operations, BatchStatus.PENDING, requestedBy, now, List.of());
    }

    public OperationBatch withStatus(BatchStatus next, List<OperationResult> newResults) {
        return new OperationBatch(id, operations, next.assertCanFollow(status), requestedBy, createdAt, newResults);
    }
}
