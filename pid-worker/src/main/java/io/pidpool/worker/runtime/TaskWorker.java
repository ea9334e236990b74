package io.pidpool.worker.runtime;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.ring.GroupRing;
import io.pidpool.worker.ring.RingMembership;
import io.pidpool.worker.runtime.HandlerRunner.Failed;
import io.pidpool.worker.runtime.HandlerRunner.NotStarted;
import io.pidpool.worker.runtime.HandlerRunner.Outcome;
import io.pidpool.worker.runtime.HandlerRunner.Succeeded;
import io.pidpool.worker.task.Claim;
import io.pidpool.worker.task.Failure;
import io.pidpool.worker.task.ReapResult;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskStore;
import io.pidpool.worker.task.TypedRanges;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine of one ring member: one {@link #runOnce} fetches due tasks from the ranges this member
 * owns, claims them as one batch under a fresh claim id, runs their handlers and settles the
 * outcomes; {@link #maintain} returns expired leases, counts the backlog and purges old DONE rows.
 *
 * <p><b>Types.</b> Ownership is per task type ({@link GroupRing}): for each type this member has a
 * handler for, it owns its ranges in the ring of the members that run that type, and it fetches
 * only tasks of those types in those ranges. A task of a type it has no handler for is never
 * fetched, so it never burns an attempt here; a type no live member runs waits PENDING, and the
 * group's reporter ({@link GroupRing#reporter()}) logs and exports its backlog.
 *
 * <p><b>Fairness.</b> Owned ranges are grouped into chunks of {@code rangesPerQuery}; a sweep visits
 * the chunks round-robin from where the last one stopped. A chunk found empty is skipped for one
 * poll interval, so a busy range cannot starve the others and idle ranges cost one query per chunk
 * per poll interval.
 *
 * <p><b>Lease.</b> A claimed task whose handler has not started {@link
 * WorkerConfig#latestStartAfterClaim()} after the claim is released instead (a batch of slow
 * handlers queued behind few threads), so every handler ends before the lease does.
 *
 * <p><b>Settlement.</b> If the store fails while settling, the settlement is kept and retried
 * before the next claim. Each step is conditional on the claim id and status RUNNING, so a retry
 * after an unknown outcome is harmless; a settlement older than two leases is dropped (the reaper
 * has returned those tasks by then).
 *
 * <p>Concurrency: every method except {@link #stop} and the read-only snapshots ({@link
 * #ownedRanges}, {@link #lastBacklog}) is called from the pool's single loop thread.
 */
final class TaskWorker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TaskWorker.class);
    private static final int PURGE_LIMIT = 1000;

    private final String group;
    private final String memberId;
    private final WorkerConfig config;
    private final TaskStore store;
    private final RingMembership membership;
    private final HandlerRunner runner;
    private final Clock clock;
    private final Ticker ticker;
    private final WorkerMetrics metrics;
    private final RandomGenerator random;
    private final Deque<Settlement> unsettled = new ArrayDeque<>();
    private final Set<String> types;

    private GroupRing ring;
    private List<Chunk> chunks = List.of();
    private int cursor;
    private long nextReap;
    private long nextBacklog;
    private long nextPurge;
    private volatile boolean stopping;
    private volatile List<TypedRanges> owned = List.of();
    private volatile Map<SlotRange, Long> lastBacklog = Map.of();
    private volatile Map<String, Long> lastUnhandled = Map.of();

    TaskWorker(
            String group,
            String memberId,
            WorkerConfig config,
            TaskStore store,
            RingMembership membership,
            HandlerRunner runner,
            Clock clock,
            Ticker ticker,
            WorkerMetrics metrics,
            RandomGenerator random) {
        this.group = group;
        this.memberId = memberId;
        this.config = config;
        this.store = store;
        this.membership = membership;
        this.runner = runner;
        this.types = Set.copyOf(runner.types());
        this.clock = clock;
        this.ticker = ticker;
        this.metrics = metrics;
        this.random = random;
        long now = ticker.read();
        this.nextReap = now;
        this.nextBacklog = now;
        this.nextPurge = now;
    }

    /** One fetch-claim-run-settle cycle; returns how many tasks it claimed (0: nothing due). */
    int runOnce() {
        settlePending();
        refreshChunks();
        if (chunks.isEmpty() || stopping) {
            return 0;
        }
        long started = ticker.read();
        Instant now = clock.instant();
        Claim claim = new Claim(memberId, nextClaimId(), now, now.plus(config.lease()));
        List<Task> claimed = new ArrayList<>();
        for (int visited = 0; visited < chunks.size() && claimed.size() < config.batchSize() && !stopping; visited++) {
            Chunk chunk = chunks.get(cursor);
            cursor = (cursor + 1) % chunks.size();
            if (ticker.read() - chunk.skipUntil < 0) {
                continue;
            }
            try {
                List<Task> found = store.findPending(group, chunk.selection, now, config.batchSize() - claimed.size());
                if (found.isEmpty()) {
                    chunk.skipUntil = ticker.read() + config.pollInterval().toNanos();
                    continue;
                }
                List<Long> ids = found.stream().map(Task::id).toList();
                List<Task> won;
                try {
                    won = store.claim(ids, claim);
                } catch (PidPoolException e) {
                    // the update may have committed before the failure: give back whatever we hold
                    unsettled.add(new Settlement(claim.claimId(), List.of(), List.of(), ids, started));
                    throw e;
                }
                if (won.size() < found.size()) {
                    metrics.claimConflicts(found.size() - won.size());
                }
                claimed.addAll(won);
            } catch (PidPoolException e) {
                metrics.storeError("claim");
                if (claimed.isEmpty()) {
                    throw e;
                }
                LOG.debug(
                        "worker {}: store failed while claiming; running the {} tasks held", memberId, claimed.size());
                break;
            }
        }
        if (claimed.isEmpty()) {
            return 0;
        }
        // no handler may start so late that it could still run when the lease ends (docs/worker.md)
        long latestStart = started + config.latestStartAfterClaim().toNanos();
        List<Outcome> outcomes = runner.runAll(claimed, () -> !stopping && ticker.read() - latestStart < 0);
        settle(claim.claimId(), outcomes, started);
        return claimed.size();
    }

    /** Reaps expired leases, counts the backlog and purges old DONE rows, each when due. */
    void maintain() {
        refreshChunks();
        long now = ticker.read();
        if (now - nextReap >= 0) {
            nextReap = now + config.reapInterval().toNanos();
            try {
                ReapResult r = store.reapExpiredLeases(group, clock.instant());
                if (!r.equals(ReapResult.NONE)) {
                    metrics.leasesReaped(r.returned(), r.failed());
                    LOG.info(
                            "worker {}: {} expired leases back to PENDING, {} FAILED",
                            memberId,
                            r.returned(),
                            r.failed());
                }
            } catch (PidPoolException e) {
                metrics.storeError("reap");
            }
        }
        if (now - nextBacklog >= 0) {
            nextBacklog = now + config.backlogInterval().toNanos();
            try {
                // ranges of different type rings may coincide: their counts add up
                Map<SlotRange, Long> counts = new LinkedHashMap<>();
                for (Chunk c : chunks) {
                    for (TypedRanges t : c.selection) {
                        store.countPending(group, t).forEach((r, n) -> counts.merge(r, n, Long::sum));
                    }
                }
                lastBacklog = Collections.unmodifiableMap(counts);
                metrics.backlog(counts);
                countUnhandled();
            } catch (PidPoolException e) {
                metrics.storeError("backlog");
            }
        }
        if (!config.doneRetention().isZero() && now - nextPurge >= 0) {
            nextPurge = now + config.purgeInterval().toNanos();
            try {
                int purged = store.purgeDone(group, clock.instant().minus(config.doneRetention()), PURGE_LIMIT);
                if (purged > 0) {
                    LOG.debug("worker {}: purged {} DONE tasks", memberId, purged);
                }
            } catch (PidPoolException e) {
                metrics.storeError("purge");
            }
        }
    }

    /** Retries the settlements the store refused earlier; throws while it still refuses. */
    void settlePending() {
        for (Iterator<Settlement> it = unsettled.iterator(); it.hasNext(); ) {
            Settlement s = it.next();
            if (ticker.read() - s.claimedAt > config.lease().multipliedBy(2).toNanos()) {
                LOG.warn(
                        "worker {}: dropping a settlement of claim {} after two leases; the reaper returns its tasks",
                        memberId,
                        s.claimId);
                it.remove();
                continue;
            }
            try {
                s.apply();
            } catch (PidPoolException e) {
                metrics.storeError("settle");
                throw e;
            }
            it.remove();
        }
    }

    boolean hasUnsettled() {
        return !unsettled.isEmpty();
    }

    void stop() {
        stopping = true;
    }

    List<TypedRanges> ownedRanges() {
        return owned;
    }

    Map<SlotRange, Long> lastBacklog() {
        return lastBacklog;
    }

    Map<String, Long> lastUnhandled() {
        return lastUnhandled;
    }

    @Override
    public void close() {
        runner.close();
    }

    private void settle(long claimId, List<Outcome> outcomes, long claimedAt) {
        Instant now = clock.instant();
        List<Task> done = new ArrayList<>();
        List<FailedTask> failures = new ArrayList<>();
        List<Long> notStarted = new ArrayList<>();
        for (Outcome o : outcomes) {
            Task t = o.task();
            if (o instanceof Succeeded) {
                done.add(t);
            } else if (o instanceof Failed f) {
                if (f.timedOut()) {
                    metrics.handlerTimedOut(t.type());
                }
                if (!f.retryable() || t.lastAttempt()) {
                    LOG.warn("task {} ({}) FAILED after {} attempts: {}", t.id(), t.type(), t.attempts(), f.error());
                    failures.add(new FailedTask(t, Failure.permanent(t.id(), f.error())));
                } else {
                    failures.add(new FailedTask(
                            t, Failure.retry(t.id(), f.error(), now.plus(config.backoffAfter(t.attempts())))));
                }
            } else if (o instanceof NotStarted) {
                notStarted.add(t.id());
            }
        }
        Settlement s = new Settlement(claimId, done, failures, notStarted, claimedAt);
        try {
            s.apply();
        } catch (PidPoolException e) {
            metrics.storeError("settle");
            unsettled.add(s);
            throw e;
        }
    }

    private void refreshChunks() {
        GroupRing current = membership.groupRing();
        if (current == ring) {
            return;
        }
        ring = current;
        List<TypedRanges> mine = new ArrayList<>();
        current.rangesOf(memberId, types).forEach((ts, ranges) -> mine.add(TypedRanges.of(ts, ranges)));
        // pack the rings' ranges into chunks of at most rangesPerQuery ranges: one statement each
        List<Chunk> next = new ArrayList<>();
        List<TypedRanges> selection = new ArrayList<>();
        int size = 0;
        long now = ticker.read();
        for (TypedRanges t : mine) {
            for (int i = 0; i < t.ranges().size(); ) {
                int take = Math.min(t.ranges().size() - i, config.rangesPerQuery() - size);
                selection.add(TypedRanges.of(t.types(), t.ranges().subList(i, i + take)));
                size += take;
                i += take;
                if (size == config.rangesPerQuery()) {
                    next.add(new Chunk(List.copyOf(selection), now));
                    selection.clear();
                    size = 0;
                }
            }
        }
        if (!selection.isEmpty()) {
            next.add(new Chunk(List.copyOf(selection), now));
        }
        chunks = List.copyOf(next);
        cursor = 0;
        owned = List.copyOf(mine);
        // count the new ranges soon, but claim first: the count is one query over every owned range
        // (hundreds of ms on a busy PostgreSQL), and a dead worker's ranges should run at once
        nextBacklog = now + config.pollInterval().toNanos();
        if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "worker {} owns {} (types: ranges, share %)",
                    memberId,
                    mine.stream()
                            .map(t -> t.types() + ": " + t.ranges().size() + ", "
                                    + String.format(
                                            "%.1f",
                                            current.ringOf(t.types().iterator().next())
                                                            .shareOf(memberId)
                                                    * 100))
                            .toList());
        }
    }

    /**
     * On the group's reporter only: PENDING tasks of types no live member runs. They have no owner,
     * so no backlog count of any member includes them; they are logged and exported here instead.
     */
    private void countUnhandled() {
        if (!ring.reporter().map(memberId::equals).orElse(false)) {
            if (!lastUnhandled.isEmpty()) {
                lastUnhandled = Map.of();
                metrics.unhandledBacklog(lastUnhandled);
            }
            return;
        }
        Map<String, Long> unhandled = new TreeMap<>();
        store.countPendingByType(group).forEach((type, n) -> {
            if (n > 0 && !ring.runs(type)) {
                unhandled.put(type, n);
            }
        });
        unhandled.forEach((type, n) -> LOG.warn(
                "group {}: {} PENDING tasks of type '{}' wait: no live worker of the group has a handler for '{}'"
                        + " (start one that registers it, or move the tasks to another group)",
                group,
                n,
                type,
                type));
        lastUnhandled = Collections.unmodifiableMap(unhandled);
        metrics.unhandledBacklog(lastUnhandled);
    }

    private long nextClaimId() {
        long id;
        do {
            id = random.nextLong();
        } while (id == 0);
        return id;
    }

    private static final class Chunk {
        final List<TypedRanges> selection;
        long skipUntil;

        Chunk(List<TypedRanges> selection, long skipUntil) {
            this.selection = selection;
            this.skipUntil = skipUntil;
        }
    }

    private record FailedTask(Task task, Failure failure) {}

    /** The outcome of one claimed batch still to be written; each step is applied at most once. */
    private final class Settlement {
        final long claimId;
        final List<Task> done;
        final List<FailedTask> failures;
        final List<Long> notStarted;
        final long claimedAt;
        boolean completed;
        boolean failed;
        boolean released;

        Settlement(long claimId, List<Task> done, List<FailedTask> failures, List<Long> notStarted, long claimedAt) {
            this.claimId = claimId;
            this.done = done;
            this.failures = failures;
            this.notStarted = notStarted;
            this.claimedAt = claimedAt;
        }

        void apply() {
            Instant now = clock.instant();
            if (!completed) {
                int n = store.complete(claimId, done.stream().map(Task::id).toList(), now);
                completed = true;
                Map<String, Integer> byType = new LinkedHashMap<>();
                done.forEach(t -> byType.merge(t.type(), 1, Integer::sum));
                byType.forEach(metrics::tasksDone);
                if (n < done.size()) {
                    metrics.settlementsLost(done.size() - n);
                }
            }
            if (!failed) {
                int n = store.fail(
                        claimId, failures.stream().map(FailedTask::failure).toList(), now);
                failed = true;
                for (FailedTask f : failures) {
                    if (f.failure().retryAt().isPresent()) {
                        metrics.taskRetried(f.task().type());
                    } else {
                        metrics.taskFailed(f.task().type());
                    }
                }
                if (n < failures.size()) {
                    metrics.settlementsLost(failures.size() - n);
                }
            }
            if (!released) {
                store.release(claimId, notStarted, now);
                released = true;
            }
        }
    }
}
