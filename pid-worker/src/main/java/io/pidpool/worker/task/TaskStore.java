package io.pidpool.worker.task;

import io.pidpool.core.ring.SlotRange;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The task table as a port. Every state change is a conditional update on the row's current
 * status (and, once claimed, on the claim's fencing token), so concurrent workers whose rings
 * disagree for a moment can overlap without ever both claiming one task.
 *
 * <p>Implementations are thread-safe. Failures of the backing store surface as {@link
 * io.pidpool.core.error.PidPoolException} with {@link io.pidpool.core.error.ErrorCode#UNAVAILABLE};
 * an update whose outcome is unknown (connection lost at commit) may or may not have applied, which
 * is why every update is conditional and may be repeated.
 */
public interface TaskStore {
    /** Inserts a PENDING task due at {@code notBefore} or {@code now}; returns its id. */
    long enqueue(NewTask task, Instant now);

    /** Inserts several tasks in one transaction; returns their ids in order. */
    List<Long> enqueueAll(List<NewTask> tasks, Instant now);

    /**
     * Up to {@code limit} PENDING tasks of {@code group} that are due ({@code next attempt <= now})
     * and selected by one of {@code selection} (type among its types, slot in one of its ranges),
     * oldest id first. Reads only; claim them next.
     */
    List<Task> findPending(String group, List<TypedRanges> selection, Instant now, int limit);

    /**
     * Claims those of {@code ids} that are still PENDING: status RUNNING, owner, claim id, lease,
     * attempts + 1. Returns the rows this claim won (possibly fewer than asked: another worker
     * was faster, which the caller counts as a claim conflict).
     */
    List<Task> claim(Collection<Long> ids, Claim claim);

    /** RUNNING → DONE for those of {@code ids} still held by {@code claimId}; returns how many. */
    int complete(long claimId, Collection<Long> ids, Instant now);

    /**
     * RUNNING → PENDING (with the retry time and error) or → FAILED, for each failure still held by
     * {@code claimId}; returns how many rows changed.
     */
    int fail(long claimId, List<Failure> failures, Instant now);

    /**
     * RUNNING → PENDING for those of {@code ids} still held by {@code claimId} that never started
     * (graceful shutdown): the attempt is given back and they are due at once.
     */
    int release(long claimId, Collection<Long> ids, Instant now);

    /**
     * RUNNING tasks of {@code group} whose lease ended before {@code now}: back to PENDING, or
     * FAILED when their attempts are used up.
     */
    ReapResult reapExpiredLeases(String group, Instant now);

    /**
     * Number of PENDING tasks of {@code group} (due or not), of any type, in each of {@code ranges},
     * in the order given; every range is a key, with 0 where there is nothing.
     */
    Map<SlotRange, Long> countPending(String group, List<SlotRange> ranges);

    /**
     * Number of PENDING tasks of {@code group} (due or not) of one of {@code selection}'s types in
     * each of its ranges, in the order given; every range is a key, with 0 where there is nothing.
     */
    Map<SlotRange, Long> countPending(String group, TypedRanges selection);

    /** Number of PENDING tasks of {@code group} (due or not) per task type (types without any are absent). */
    Map<String, Long> countPendingByType(String group);

    /** Number of tasks of {@code group} per status (statuses without tasks are absent). */
    Map<TaskStatus, Long> countByStatus(String group);

    Optional<Task> find(long id);

    /** Deletes up to {@code limit} DONE tasks of {@code group} last updated before {@code olderThan}. */
    int purgeDone(String group, Instant olderThan, int limit);
}
