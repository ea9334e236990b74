package io.pidpool.worker.runtime;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.ring.GroupRing;
import io.pidpool.worker.ring.RingMembership;
import io.pidpool.worker.runtime.ChunkSweep.Chunk;
import io.pidpool.worker.runtime.HandlerRunner.Outcome;
import io.pidpool.worker.task.Claim;
import io.pidpool.worker.task.ReapResult;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskStore;
import io.pidpool.worker.task.TypedRanges;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
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
 * the chunks round-robin from where the last one stopped ({@link ChunkSweep}).
 *
 * <p><b>Lease.</b> A claimed task whose handler has not started {@link
 * WorkerConfig#latestStartAfterClaim()} after the claim is released instead (a batch of slow
 * handlers queued behind few threads), so every handler ends before the lease does.
 *
 * <p><b>Settlement.</b> If the store fails while settling, the settlement is kept and retried
 * before the next claim ({@link Settlements}).
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
    private final Settlements settlements;
    private final ChunkSweep sweep;
    private final Set<String> types;

    private GroupRing ring;
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
        this.settlements = new Settlements(memberId, config, store, clock, ticker, metrics);
        this.sweep = new ChunkSweep(config.rangesPerQuery());
        long now = ticker.read();
        this.nextReap = now;
        this.nextBacklog = now;
        this.nextPurge = now;
    }

    /** One fetch-claim-run-settle cycle; returns how many tasks it claimed (0: nothing due). */
    int runOnce() {
        settlePending();
        refreshChunks();
        if (sweep.isEmpty() || stopping) {
            return 0;
        }
        long started = ticker.read();
        Instant now = clock.instant();
        Claim claim = new Claim(memberId, nextClaimId(), now, now.plus(config.lease()));
        List<Task> claimed = new ArrayList<>();
        for (int visited = 0; visited < sweep.size() && claimed.size() < config.batchSize() && !stopping; visited++) {
            Chunk chunk = sweep.next();
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
                    settlements.giveBack(claim.claimId(), ids, started);
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
        settlements.settle(claim.claimId(), outcomes, started);
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
                for (TypedRanges t : sweep.selections()) {
                    store.countPending(group, t).forEach((r, n) -> counts.merge(r, n, Long::sum));
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
        settlements.retryPending();
    }

    boolean hasUnsettled() {
        return settlements.hasUnsettled();
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

    private void refreshChunks() {
        GroupRing current = membership.groupRing();
        if (current == ring) {
            return;
        }
        ring = current;
        List<TypedRanges> mine = new ArrayList<>();
        current.rangesOf(memberId, types).forEach((ts, ranges) -> mine.add(TypedRanges.of(ts, ranges)));
        long now = ticker.read();
        sweep.repack(mine, now);
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
}
