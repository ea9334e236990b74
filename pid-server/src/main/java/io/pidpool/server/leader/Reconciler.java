package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One level-triggered reconciliation pass: compares the database view, the ZooKeeper view and the
 * leader's bookkeeping, and decides the writes that bring ZooKeeper where the database and the
 * placement policy want it. It performs no I/O: it returns {@link Intent}s (and may hand each to a
 * sink as soon as it is decided, which sends it), database row changes and alerts, and changes
 * {@link TermBookkeeping} only through {@link TermBookkeeping#replay} of the records it emits.
 *
 * <p>Order within a pass: housekeeping of existing nodes (acks, failures, repairs, updates) and
 * handshakes, then the placement's revokes and releases, then its adds (a new instance's handshake
 * directly before its share). An add is written only when
 * the leader's own view proves the PID free: no node of it anywhere in the tree except DELETED ones,
 * and no write about it in flight. Together with "delete first, then add" this is the exclusive-hold
 * rule of docs/architecture.md §4 on the leader's side; a node of a departed instance is deleted
 * (released) only once that instance's grace period ({@code graceOf}: the leader's grace plus the
 * callback deadline the instance registered) has passed since the leader saw the instance go.
 *
 * <p>Concurrency: not thread-safe; runs on the leader's serial executor.
 */
final class Reconciler {

    /** What one pass decided. */
    /**
     * @param cooldownStarts cooldowns to store (their end times survive a change of leader)
     * @param cooldownEnds PIDs whose stored cooldown ended
     */
    record Decision(
            List<Intent> intents,
            List<Assignment> rowUpserts,
            Set<String> rowRemovals,
            List<PidRecord> pidUpdates,
            List<String> alerts,
            List<Cooldown> cooldownStarts,
            Set<String> cooldownEnds) {}

    /**
     * What a pass looks at. A <em>full</em> pass is level-triggered over everything (term start,
     * database reload, rescan, and at least every second while events flow); an incremental pass
     * looks only at the PIDs whose nodes changed since the last pass ({@code dirtyPids}: housekeeping
     * and database rows), and runs the placement only when {@code placement} says something it
     * depends on may have changed. An acknowledgement ADDING -> ADDED, most of the traffic, then costs
     * O(1) instead of a pass over every PID.
     */
    record Scope(boolean full, Set<String> dirtyPids, boolean placement, boolean rows) {
        static final Scope FULL = new Scope(true, Set.of(), true, true);

        Scope(boolean full, Set<String> dirtyPids, boolean placement) {
            this(full, dirtyPids, placement, true);
        }

        /**
         * The same pass without the database rows: a new term's first pass, before it has read the
         * stored rows to diff against (it would list every row as changed and write none).
         */
        Scope withoutRows() {
            return new Scope(full, dirtyPids, placement, false);
        }
    }

    private final ZkLayout layout;
    private final LeaderSettings settings;
    private final Clock clock;

    Reconciler(ZkLayout layout, LeaderSettings settings) {
        this(layout, settings, Clock.systemUTC());
    }

    /** @param clock wall time for the stored cooldown end times (decisions use the monotonic time) */
    Reconciler(ZkLayout layout, LeaderSettings settings, Clock clock) {
        this.layout = layout;
        this.settings = settings;
        this.clock = clock;
    }

    Decision decide(
            ZkView view,
            DbView db,
            TermBookkeeping state,
            PlacementPolicy policy,
            Epoch epoch,
            long graceNanos,
            long now) {
        return decide(view, db, state, policy, epoch, graceNanos, now, Scope.FULL);
    }

    Decision decide(
            ZkView view,
            DbView db,
            TermBookkeeping state,
            PlacementPolicy policy,
            Epoch epoch,
            long graceNanos,
            long now,
            Scope scope) {
        return decide(view, db, state, policy, epoch, graceNanos, now, scope, intent -> {});
    }

    /**
     * Decides one pass and hands each intent to {@code sink} as soon as its place in the sending order
     * is final, so that the writes of a big pass (a first pass at 100,000 PIDs decides 100,000 adds)
     * leave while the rest is still being decided. The sink receives exactly the intents of
     * {@link Decision#intents()}, in that order; if the pass throws half-way, it has received a prefix
     * of them.
     *
     * <p>The order guarantees (docs/design.md §5–§6): everything decided before the placement's first add
     * (housekeeping, handshakes, the placement's revokes and releases) is sent before any add; an
     * instance handshaken in this pass gets its handshake directly before the first of its adds, so the
     * pids node, its path and the share mostly travel in one multi-op; a handshake without adds in this
     * pass is sent before the placement's steps (or, if its adds were all refused, at the end).
     *
     * <p>The sink must not change {@code state}: the pass decides against the bookkeeping as it was at
     * its start (plus the records it emits itself), exactly as without a sink; the caller records the
     * intents as issued after the pass ({@link TermEvent.WriteIssued}).
     */
    Decision decide(
            ZkView view,
            DbView db,
            TermBookkeeping state,
            PlacementPolicy policy,
            Epoch epoch,
            long graceNanos,
            long now,
            Scope scope,
            Consumer<Intent> sink) {
        var pass = new ReconcilePass(view, db, state, epoch, graceNanos, now, scope, sink);
        var cooldowns = new CooldownKeeper(pass, settings, clock);
        var housekeeping = new Housekeeping(pass, settings, cooldowns);
        var handshakes = new Handshakes(pass, layout);
        var placer = new Placer(pass, layout, settings, handshakes);
        housekeeping.departures();
        cooldowns.cooldowns();
        housekeeping.housekeeping();
        handshakes.handshakes();
        placer.place(policy);
        new RowSync(pass).rows();
        pass.releaseHandshakes(null);
        return new Decision(
                pass.intents,
                pass.rowUpserts,
                pass.rowRemovals,
                pass.pidUpdates,
                pass.alerts,
                pass.cooldownStarts,
                pass.cooldownEnds);
    }
}
