package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.NonRetryableTaskException;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskStore;
import java.time.Clock;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The usage sync as pid-worker tasks: {@link #handler()} runs one {@link UsageLedgerSync} pass over
 * the shard a task names; {@link #ensurePending()} (the scheduler, called on a timer by every server)
 * keeps one PENDING task per shard.
 *
 * <p><b>Why tasks and not a loop on the leader.</b> The task key {@code usage-sync:<cluster>:<shard>}
 * puts each shard's task on one slot of the worker ring, so the leaderless ring spreads the shards
 * over the servers and moves them when a server dies; the leader stays free for allocation. A task
 * is short (one pass, bounded by {@code maxEventsPerPass}) and does not re-enqueue itself (a crash
 * after the enqueue and before DONE would double the chain); the scheduler tops up instead.
 *
 * <p><b>Duplicates.</b> Two servers' schedulers may both see "none pending" and enqueue; a task may
 * run twice (at-least-once); a pending task may start while the previous one still runs. All three
 * are harmless: a pass is idempotent, offsets only move forward, and two passes of one shard in one
 * process coalesce on the shard lock.
 */
public final class UsageSyncTasks {
    private static final Logger LOG = LoggerFactory.getLogger(UsageSyncTasks.class);
    public static final String TYPE = "usage-sync";

    private final UsageLedgerSync sync;
    private final TaskStore store;
    private final String group;
    private final Clock clock;
    private final Consumer<SyncReport> reports;

    /**
     * @param reports receives every pass's report (metrics, alerts); called on the handler thread
     */
    public UsageSyncTasks(
            UsageLedgerSync sync, TaskStore store, String group, Clock clock, Consumer<SyncReport> reports) {
        this.sync = requireNonNull(sync, "sync");
        this.store = requireNonNull(store, "store");
        this.group = Names.requireToken(group, "group");
        this.clock = requireNonNull(clock, "clock");
        this.reports = requireNonNull(reports, "reports");
    }

    /** The task key of a shard: decides which worker of the ring runs it. */
    public String key(int shard) {
        return TYPE + ":" + sync.keys().cluster() + ":" + shard;
    }

    /** The handler to register under {@link #TYPE}. */
    public TaskHandler handler() {
        return this::handle;
    }

    private void handle(Task task) {
        int shard;
        try {
            shard = Integer.parseInt(task.body().trim());
            requireArgument(shard >= 0 && shard < sync.keys().shards(), "shard", "no shard %d", shard);
        } catch (NumberFormatException | PidPoolException e) {
            throw new NonRetryableTaskException(
                    "usage-sync task body must be a shard number, was '" + task.body() + "'");
        }
        SyncReport report = sync.syncShard(shard);
        if (report.alertWorthy()) {
            LOG.warn("usage sync of shard {} needs attention: {}", shard, report);
        }
        reports.accept(report);
    }

    /**
     * Enqueues a task for every shard that has none PENDING (due or not); returns how many were
     * enqueued. Call it every sync interval from each server.
     */
    public int ensurePending() {
        int enqueued = 0;
        for (int shard = 0; shard < sync.keys().shards(); shard++) {
            String key = key(shard);
            long slot = ConsistentHashRing.slotOf(key);
            SlotRange range = new SlotRange(slot, slot + 1);
            long pending = store.countPending(group, List.of(range)).getOrDefault(range, 0L);
            if (pending == 0) {
                store.enqueue(
                        NewTask.of(group, TYPE, key, Integer.toString(shard)).withMaxAttempts(3), clock.instant());
                enqueued++;
            }
        }
        return enqueued;
    }
}
