package io.pidpool.worker.task;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.ring.SlotRange;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@link TaskStore} in memory with the same conditional semantics as the SQL one (the {@code
 * TaskStoreContract} holds both to it). {@link #setAvailable(boolean) setAvailable(false)} makes
 * every call fail with UNAVAILABLE, to model a database outage. Thread-safe (one monitor).
 */
public class InMemoryTaskStore implements TaskStore {
    private final TreeMap<Long, Task> rows = new TreeMap<>();
    private long nextId = 1;
    private volatile boolean available = true;

    public void setAvailable(boolean up) {
        available = up;
    }

    /** All rows, by id. */
    public synchronized List<Task> all() {
        return List.copyOf(rows.values());
    }

    private void check() {
        if (!available) {
            throw PidPoolException.unavailable("in-memory task store is down", null);
        }
    }

    @Override
    public long enqueue(NewTask task, Instant now) {
        return enqueueAll(List.of(task), now).get(0);
    }

    @Override
    public synchronized List<Long> enqueueAll(List<NewTask> tasks, Instant now) {
        check();
        List<Long> ids = new ArrayList<>();
        long ms = now.toEpochMilli();
        for (NewTask t : tasks) {
            long id = nextId++;
            rows.put(
                    id,
                    new Task(
                            id,
                            t.group(),
                            t.slot(),
                            t.type(),
                            t.key(),
                            t.body(),
                            TaskStatus.PENDING,
                            0,
                            t.maxAttempts(),
                            t.notBefore().map(Instant::toEpochMilli).orElse(ms),
                            0,
                            null,
                            0,
                            null,
                            ms,
                            ms));
            ids.add(id);
        }
        return ids;
    }

    @Override
    public synchronized List<Task> findPending(String group, List<TypedRanges> selection, Instant now, int limit) {
        check();
        List<Task> out = new ArrayList<>();
        for (Task t : rows.values()) {
            if (out.size() >= limit) {
                break;
            }
            if (t.group().equals(group)
                    && t.status() == TaskStatus.PENDING
                    && t.nextAttemptAtMs() <= now.toEpochMilli()
                    && selection.stream().anyMatch(sel -> sel.contains(t.type(), t.slot()))) {
                out.add(t);
            }
        }
        return out;
    }

    @Override
    public synchronized List<Task> claim(Collection<Long> ids, Claim claim) {
        check();
        List<Task> won = new ArrayList<>();
        for (long id : ids.stream().sorted().toList()) {
            Task t = rows.get(id);
            if (t != null && t.status() == TaskStatus.PENDING) {
                Task c = new Task(
                        t.id(),
                        t.group(),
                        t.slot(),
                        t.type(),
                        t.key(),
                        t.body(),
                        TaskStatus.RUNNING,
                        t.attempts() + 1,
                        t.maxAttempts(),
                        t.nextAttemptAtMs(),
                        claim.leaseUntil().toEpochMilli(),
                        claim.owner(),
                        claim.claimId(),
                        t.lastError(),
                        t.createdAtMs(),
                        claim.now().toEpochMilli());
                rows.put(id, c);
                won.add(c);
            }
        }
        return won;
    }

    private boolean held(Task t, long claimId) {
        return t != null && t.status() == TaskStatus.RUNNING && t.claimId() == claimId;
    }

    @Override
    public synchronized int complete(long claimId, Collection<Long> ids, Instant now) {
        check();
        int n = 0;
        for (long id : ids) {
            Task t = rows.get(id);
            if (held(t, claimId)) {
                rows.put(
                        id,
                        with(
                                t,
                                TaskStatus.DONE,
                                t.attempts(),
                                t.nextAttemptAtMs(),
                                0,
                                t.owner(),
                                t.claimId(),
                                t.lastError(),
                                now));
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized int fail(long claimId, List<Failure> failures, Instant now) {
        check();
        int n = 0;
        for (Failure f : failures) {
            Task t = rows.get(f.id());
            if (held(t, claimId)) {
                rows.put(
                        f.id(),
                        with(
                                t,
                                f.retryAt().isPresent() ? TaskStatus.PENDING : TaskStatus.FAILED,
                                t.attempts(),
                                f.retryAt().orElse(now).toEpochMilli(),
                                0,
                                t.owner(),
                                t.claimId(),
                                f.error(),
                                now));
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized int release(long claimId, Collection<Long> ids, Instant now) {
        check();
        int n = 0;
        for (long id : ids) {
            Task t = rows.get(id);
            if (held(t, claimId)) {
                rows.put(
                        id,
                        with(
                                t,
                                TaskStatus.PENDING,
                                t.attempts() - 1,
                                now.toEpochMilli(),
                                0,
                                null,
                                0,
                                t.lastError(),
                                now));
                n++;
            }
        }
        return n;
    }

    @Override
    public synchronized ReapResult reapExpiredLeases(String group, Instant now) {
        check();
        int returned = 0;
        int failed = 0;
        for (Task t : List.copyOf(rows.values())) {
            if (t.group().equals(group) && t.status() == TaskStatus.RUNNING && t.leaseUntilMs() < now.toEpochMilli()) {
                if (t.attempts() >= t.maxAttempts()) {
                    rows.put(
                            t.id(),
                            with(
                                    t,
                                    TaskStatus.FAILED,
                                    t.attempts(),
                                    t.nextAttemptAtMs(),
                                    0,
                                    t.owner(),
                                    t.claimId(),
                                    "lease of " + t.owner() + " expired on the last attempt",
                                    now));
                    failed++;
                } else {
                    rows.put(
                            t.id(),
                            with(
                                    t,
                                    TaskStatus.PENDING,
                                    t.attempts(),
                                    now.toEpochMilli(),
                                    0,
                                    null,
                                    0,
                                    "lease of " + t.owner() + " expired",
                                    now));
                    returned++;
                }
            }
        }
        return returned == 0 && failed == 0 ? ReapResult.NONE : new ReapResult(returned, failed);
    }

    @Override
    public synchronized Map<SlotRange, Long> countPending(String group, List<SlotRange> ranges) {
        return countPending(group, null, ranges);
    }

    @Override
    public synchronized Map<SlotRange, Long> countPending(String group, TypedRanges selection) {
        return countPending(group, selection.types(), selection.ranges());
    }

    @Override
    public synchronized Map<String, Long> countPendingByType(String group) {
        check();
        Map<String, Long> out = new TreeMap<>();
        for (Task t : rows.values()) {
            if (t.group().equals(group) && t.status() == TaskStatus.PENDING) {
                out.merge(t.type(), 1L, Long::sum);
            }
        }
        return out;
    }

    private Map<SlotRange, Long> countPending(String group, Set<String> types, List<SlotRange> ranges) {
        check();
        Map<SlotRange, Long> out = new LinkedHashMap<>();
        ranges.forEach(r -> out.put(r, 0L));
        for (Task t : rows.values()) {
            if (t.group().equals(group)
                    && t.status() == TaskStatus.PENDING
                    && (types == null || types.contains(t.type()))) {
                for (SlotRange r : ranges) {
                    if (r.contains(t.slot())) {
                        out.merge(r, 1L, Long::sum);
                        break;
                    }
                }
            }
        }
        return out;
    }

    @Override
    public synchronized Map<TaskStatus, Long> countByStatus(String group) {
        check();
        Map<TaskStatus, Long> out = new EnumMap<>(TaskStatus.class);
        rows.values().stream().filter(t -> t.group().equals(group)).forEach(t -> out.merge(t.status(), 1L, Long::sum));
        return out;
    }

    @Override
    public synchronized Optional<Task> find(long id) {
        check();
        return Optional.ofNullable(rows.get(id));
    }

    @Override
    public synchronized int purgeDone(String group, Instant olderThan, int limit) {
        check();
        List<Long> ids = rows.values().stream()
                .filter(t -> t.group().equals(group)
                        && t.status() == TaskStatus.DONE
                        && t.updatedAtMs() < olderThan.toEpochMilli())
                .map(Task::id)
                .limit(limit)
                .toList();
        ids.forEach(rows::remove);
        return ids.size();
    }

    private static Task with(
            Task t,
            TaskStatus status,
            int attempts,
            long nextAttemptAtMs,
            long leaseUntilMs,
            String owner,
            long claimId,
            String lastError,
            Instant now) {
        status.assertValidTransition(t.status());
        return new Task(
                t.id(),
                t.group(),
                t.slot(),
                t.type(),
                t.key(),
                t.body(),
                status,
                attempts,
                t.maxAttempts(),
                nextAttemptAtMs,
                leaseUntilMs,
                owner,
                claimId,
                lastError,
                t.createdAtMs(),
                now.toEpochMilli());
    }
}
