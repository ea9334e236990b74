package io.pidpool.server.leader;

import java.util.concurrent.TimeUnit;

/**
 * When a leadership term reconciles, and how much a pass covers: a burst of events is reconciled once,
 * a full pass and a placement run at least every second, and what passes cost spaces them out so that
 * they never take more than about half the leader's thread. The term tells it what happened (a pass
 * was asked for, the database view changed, a write failed) and asks it, at the start of a pass, what
 * this pass must cover.
 *
 * <p>Time comes in as arguments and delays go out through {@link Scheduler}, so the protocol
 * simulation runs this class on virtual time (in production the scheduler is the leader's serial
 * executor, and costs are the serial thread's CPU time).
 *
 * <p>Concurrency: confined to the leader's serial executor, like the term.
 */
final class PassPacing {
    /** Runs a task on the leader's serial executor after a delay. */
    @FunctionalInterface
    interface Scheduler {
        void schedule(Runnable task, long delayNanos);
    }

    /** What one pass covers: everything ({@code full}) or the dirty PIDs, with or without placement. */
    record Plan(long now, boolean full, boolean placement) {}

    /**
     * A burst of events is reconciled once, this long after its first event, or after as long as the
     * last pass took if that was longer (so passes never take more than about half the leader's thread,
     * and the events in between are coalesced).
     */
    static final long PASS_DEBOUNCE_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    /** While events flow, the placement runs at least this often even if nothing structural changed. */
    static final long PLACEMENT_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * A placement after a structural change waits until this many times the last placement's cost has
     * passed since it (nothing at 1,000 PIDs; at 100,000 a placement costs hundreds of milliseconds, and
     * back-to-back placements would starve the events and acknowledgements in between).
     */
    static final int PLACEMENT_COST_FACTOR = 3;
    /**
     * Costs below this do not slow anything down (the debounce and the placement spacing above count
     * only what exceeds it), so a small cluster reacts at once: at 1,000 PIDs a pass takes a few ms.
     */
    static final long FREE_COST_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** ... and a full pass at least this often, or 10 times its own cost, whichever is longer. */
    static final long FULL_PASS_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Scheduler scheduler;
    private final Runnable pass;

    private boolean closed;
    private boolean scheduled;
    /** The scheduled pass runs as soon as the thread is free ({@link #requestNow}). */
    private boolean dueNow;
    /** Names the scheduled pass; one superseded by {@link #requestNow} finds another and skips. */
    private long ticket;

    private boolean fullRequested = true;
    private boolean placementRequested;
    private boolean placementTimer;
    private long lastFullNanos;
    private long lastFullCostNanos;
    private long lastPlacementNanos;
    private long lastPlacementCostNanos;
    private long lastPassCostNanos;
    private long placedStructure = Long.MIN_VALUE;

    /** @param pass what a scheduled pass runs (on the scheduler's executor) */
    PassPacing(Scheduler scheduler, Runnable pass) {
        this.scheduler = scheduler;
        this.pass = pass;
    }

    /** Something changed (a watcher event, a write completed): reconcile soon, once for a burst. */
    void request() {
        if (closed || scheduled) {
            return;
        }
        long delay = Math.max(
                PASS_DEBOUNCE_NANOS, Math.min(lastPassCostNanos - FREE_COST_NANOS, TimeUnit.SECONDS.toNanos(1)));
        schedule(delay);
    }

    /**
     * An operator's batch was applied: reconcile as soon as the thread is free, without the debounce
     * and the spacing. The batch is the burst, its hand-out is what the operator waits for, and
     * batches are applied at most 16 per task, so passes asked for this way stay as rare as batches.
     */
    void requestNow() {
        if (closed || (scheduled && dueNow)) {
            return;
        }
        schedule(0);
    }

    private void schedule(long delay) {
        scheduled = true;
        dueNow = delay == 0;
        long mine = ++ticket;
        scheduler.schedule(
                () -> {
                    if (mine == ticket) {
                        pass.run();
                    }
                },
                delay);
    }

    /** The next pass diffs everything (the database view changed, or the view was re-read). */
    void requestFull() {
        fullRequested = true;
    }

    /** The next pass places again even if the tree's structure did not change (a write failed). */
    void requestPlacement() {
        placementRequested = true;
    }

    /** A scheduled pass starts running (whether or not it then reconciles). */
    void started() {
        scheduled = false;
    }

    /**
     * A pass reconciles at {@code now} with the view at {@code structure}: what it covers. A placement
     * that is due later because the last one was expensive comes back then by itself.
     */
    Plan plan(long now, long structure) {
        boolean full =
                fullRequested || now - lastFullNanos >= Math.max(FULL_PASS_INTERVAL_NANOS, 10 * lastFullCostNanos);
        boolean changed = placementRequested || structure != placedStructure;
        long sincePlacement = now - lastPlacementNanos;
        long placementDue =
                lastPlacementNanos + PLACEMENT_COST_FACTOR * Math.max(0, lastPlacementCostNanos - FREE_COST_NANOS);
        boolean placement = full
                || (changed && now - placementDue >= 0)
                || sincePlacement >= Math.max(PLACEMENT_INTERVAL_NANOS, 10 * lastPlacementCostNanos);
        fullRequested = false;
        if (placement) {
            placementRequested = false;
            placedStructure = structure;
            lastPlacementNanos = now;
        } else if (changed && !placementTimer) {
            // an expensive placement (a big cluster) runs at most every few times its cost; come back then
            placementTimer = true;
            scheduler.schedule(
                    () -> {
                        placementTimer = false;
                        request();
                    },
                    placementDue - now);
        }
        return new Plan(now, full, placement);
    }

    /**
     * The pass decided in {@code decideCost} and took {@code passCost} in all (database writes
     * included); a pass that failed half-way does not count as full.
     */
    void finished(Plan plan, long decideCost, long passCost) {
        if (plan.full()) {
            lastFullNanos = plan.now();
            lastFullCostNanos = decideCost;
        }
        if (plan.placement()) {
            lastPlacementCostNanos = decideCost;
        }
        lastPassCostNanos = passCost;
    }

    /** Whether the last placement saw the tree at {@code structure}. */
    boolean placedAt(long structure) {
        return structure == placedStructure;
    }

    /**
     * An expected structural change (the node of an add the placement counted, a handshake's pids node)
     * landed: it needs no new placement.
     */
    void placed(long structure) {
        placedStructure = structure;
    }

    /** The term ended: nothing more is scheduled. */
    void close() {
        closed = true;
    }
}
