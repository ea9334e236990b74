package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.HealthReport;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.leader.PlacementPolicy.DepartedInput;
import io.pidpool.server.leader.PlacementPolicy.LiveInput;
import io.pidpool.server.leader.PlacementPolicy.ModuleInput;
import io.pidpool.server.zk.ZkWrite;
import java.time.Clock;
import java.time.Instant;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.zookeeper.CreateMode;

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
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Reconciler.class);

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

    /**
     * Distinct ids in their natural order, as a read-only set over one sorted array: what a {@code
     * TreeSet} would hold and iterate, built with one sort instead of a tree insertion per id (the
     * placement's input lists every desired PID, 100,000 at scale, on every placement).
     */
    static final class SortedIds extends AbstractSet<String> {
        private final String[] ids;

        private SortedIds(String[] ids) {
            this.ids = ids;
        }

        /** @param distinct ids without duplicates, in any order */
        static Set<String> of(Collection<String> distinct) {
            String[] ids = distinct.toArray(new String[0]);
            Arrays.sort(ids);
            return new SortedIds(ids);
        }

        @Override
        public Iterator<String> iterator() {
            return Collections.unmodifiableList(Arrays.asList(ids)).iterator();
        }

        @Override
        public int size() {
            return ids.length;
        }

        @Override
        public boolean contains(Object o) {
            return o instanceof String id && Arrays.binarySearch(ids, id) >= 0;
        }

        @Override
        public Object[] toArray() {
            return ids.clone();
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> T[] toArray(T[] a) {
            if (a.length < ids.length) {
                return (T[]) Arrays.copyOf(ids, ids.length, a.getClass());
            }
            System.arraycopy(ids, 0, a, 0, ids.length);
            if (a.length > ids.length) {
                a[ids.length] = null;
            }
            return a;
        }
    }

    /** A live, ready instance that may get adds in this pass: its session and its pids node. */
    private record AddTarget(long sessionId, String pidsPath) {
        static final AddTarget NONE = new AddTarget(0, "");
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
        var pass = new Pass(view, db, state, epoch, graceNanos, now, scope, sink);
        pass.departures();
        pass.cooldowns();
        pass.housekeeping();
        pass.handshakes();
        pass.place(policy);
        pass.rows();
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

    private final class Pass {
        final ZkView view;
        final DbView db;
        final TermBookkeeping state;
        final Epoch epoch;
        final long grace;
        final long now;
        final List<Intent> intents = new ArrayList<>();
        final List<Assignment> rowUpserts = new ArrayList<>();
        final Set<String> rowRemovals = new TreeSet<>();
        final List<PidRecord> pidUpdates = new ArrayList<>();
        final List<String> alerts = new ArrayList<>();
        final List<Cooldown> cooldownStarts = new ArrayList<>();
        final Set<String> cooldownEnds = new TreeSet<>();
        /** Paths and PIDs this pass already wrote to: one decision each per pass. */
        Set<String> touched = new HashSet<>();

        Set<String> touchedPids = new HashSet<>();
        /** {@link #addTarget}, per instance. */
        final Map<InstanceKey, AddTarget> addTargets = new HashMap<>();
        /** PIDs whose database row this pass changes. */
        final Set<String> updatedPids = new HashSet<>();
        /** Instances whose handshake this pass writes (their adds may follow it in the same pass). */
        final Set<InstanceKey> handshaking = new HashSet<>();
        /**
         * Handshakes decided but not sent yet, in decision order: each waits for the first add of its
         * instance (see {@link #decided}).
         */
        final Map<InstanceKey, Intent> heldHandshakes = new LinkedHashMap<>();
        /** Receives each intent when its place in the sending order is final. */
        final Consumer<Intent> sink;

        Set<InstanceKey> holders;
        final Scope scope;

        Pass(
                ZkView view,
                DbView db,
                TermBookkeeping state,
                Epoch epoch,
                long grace,
                long now,
                Scope scope,
                Consumer<Intent> sink) {
            this.scope = scope;
            this.sink = sink;
            this.view = view;
            this.db = db;
            this.state = state;
            this.epoch = epoch;
            this.grace = grace;
            this.now = now;
        }

        void emit(TermEvent record) {
            state.replay(record);
        }

        /**
         * An intent was decided: it is sent at once, except a handshake, which waits for its instance's
         * first add (then the pids node, its path and the share mostly travel in the same multi-op and
         * the SDK, pointed at the node, lists the whole share at once) or for {@link
         * #releaseHandshakes}. Everything decided before the placement's adds is thereby sent before
         * them ("delete first, then add"); only the order of writes about different paths and PIDs
         * changes (each has at most one decision per pass).
         */
        void decided(Intent intent) {
            if (intent.kind() == Intent.Kind.HANDSHAKE) {
                heldHandshakes.put(intent.holder(), intent);
                return;
            }
            if (intent.kind() == Intent.Kind.ADD && !heldHandshakes.isEmpty()) {
                Intent handshake = heldHandshakes.remove(intent.holder());
                if (handshake != null) {
                    send(handshake);
                }
            }
            send(intent);
        }

        /** Sends the held handshakes, except those of {@code keep} (instances about to get adds). */
        void releaseHandshakes(Set<InstanceKey> keep) {
            for (var it = heldHandshakes.values().iterator(); it.hasNext(); ) {
                Intent handshake = it.next();
                if (keep == null || !keep.contains(handshake.holder())) {
                    it.remove();
                    send(handshake);
                }
            }
        }

        private void send(Intent intent) {
            intents.add(intent);
            sink.accept(intent);
        }

        // ---------------------------------------------------------------- departures

        void departures() {
            Set<InstanceKey> present = new HashSet<>();
            for (ModuleKey module : view.modules()) {
                for (ZkView.InstanceEntry instance : view.instances(module).values()) {
                    if (instance.entry().stat().isEphemeral()) {
                        present.add(instance.key());
                        if (state.departedAt(instance.key()) != null) {
                            emit(new TermEvent.Returned(instance.key()));
                        }
                        if (state.sessionOf(instance.key()) != instance.sessionId()) {
                            emit(new TermEvent.Seen(instance.key(), instance.sessionId()));
                        }
                    }
                }
            }
            Set<InstanceKey> holders = holders();
            for (InstanceKey key : holders) {
                if (!present.contains(key) && state.departedAt(key) == null) {
                    long session = state.sessionOf(key);
                    if (session == 0) {
                        for (ZkView.PidEntry entry : view.pidNodes(key).values()) {
                            if (entry.node() != null && entry.node().ownerSessionId() != 0) {
                                session = entry.node().ownerSessionId();
                                break;
                            }
                        }
                    }
                    emit(new TermEvent.Departed(key, now, session));
                }
            }
            for (InstanceKey key : List.copyOf(state.departed())) {
                if (!holders.contains(key)) {
                    emit(new TermEvent.Forgotten(key));
                }
            }
        }

        /** Instances that have a pids node or PID nodes in the tree. */
        Set<InstanceKey> holders() {
            if (this.holders != null) {
                return this.holders;
            }
            Set<InstanceKey> holders = new TreeSet<>(view.holderKeys());
            for (ModuleKey module : view.modules()) {
                for (InstanceId id : view.pidsNodes(module).keySet()) {
                    holders.add(new InstanceKey(module, id));
                }
            }
            this.holders = holders;
            return holders;
        }

        /**
         * The grace period of one instance: the leader's grace (T/3 + logout allowance) plus the
         * callback deadline D the instance registered. A login begun right before the instance lost
         * its session ends (returns, or is abandoned and logged out) by D after its start; see
         * docs/architecture.md §4 for the arithmetic.
         */
        long graceOf(InstanceKey key) {
            return grace + callbackDeadline(key);
        }

        /**
         * D of an instance, from its instance node while it lives, else from the copy of its
         * registration in its pids node (written with the handshake). An instance that reports none (an
         * SDK that enforces no deadline) counts 0, as before deadlines existed; a pids node without a
         * copy (created by a leader that kept none) or an unreadable one counts the SDK's default.
         */
        long callbackDeadline(InstanceKey key) {
            ZkView.InstanceEntry instance = live(key);
            if (instance != null && instance.node() != null) {
                return TimeUnit.MILLISECONDS.toNanos(instance.node().callbackDeadlineMillis());
            }
            ZkView.Entry pidsNode = view.pidsNodes(key.module()).get(key.instance());
            if (pidsNode != null && pidsNode.data() != null && pidsNode.data().length > 0) {
                try {
                    return TimeUnit.MILLISECONDS.toNanos(
                            InstanceNode.decode(pidsNode.data()).callbackDeadlineMillis());
                } catch (RuntimeException unreadable) {
                    // counted as unknown below
                }
            }
            return InstanceNode.DEFAULT_CALLBACK_DEADLINE.toNanos();
        }

        ZkView.InstanceEntry live(InstanceKey key) {
            ZkView.InstanceEntry entry = view.instances(key.module()).get(key.instance());
            return entry != null && entry.entry().stat().isEphemeral() ? entry : null;
        }

        // ---------------------------------------------------------------- cooldowns

        void cooldowns() {
            for (var e : List.copyOf(state.cooldowns().entrySet())) {
                if (now - e.getValue() >= 0) {
                    PidRecord account = db.pid(e.getKey());
                    if (account != null && account.status() == PidAvailability.COOLDOWN) {
                        pidUpdates.add(account.withStatus(PidAvailability.ACTIVE));
                        updatedPids.add(account.id());
                    }
                    emit(new TermEvent.CooldownEnded(e.getKey()));
                    cooldownEnds.add(e.getKey());
                    alerts.add("PID " + e.getKey() + " leaves cooldown");
                }
            }
            if (!scope.full()) {
                return; // the database view changes only before full passes (load, batches)
            }
            // COOLDOWN without a stored end (stored before cooldowns had one, or the store failed):
            // this term does not know since when, so it starts over
            for (PidRecord account : db.pids().values()) {
                if (account.status() == PidAvailability.COOLDOWN
                        && !state.cooldowns().containsKey(account.id())
                        && !updatedPids.contains(account.id())) {
                    startCooldown(account.id(), "COOLDOWN without a stored end time; started over by this leader");
                }
            }
        }

        /**
         * Puts {@code pid} into cooldown for {@link LeaderSettings#cooldown()} from now: status COOLDOWN,
         * the end time stored, handed to nobody until then (the placement sees it as unassignable and
         * withdraws it where it is held). Returns the wall-clock end.
         */
        Instant startCooldown(String pid, String cause) {
            emit(new TermEvent.CooldownStarted(pid, now + settings.cooldown().toNanos()));
            Instant wall = clock.instant();
            Instant until = wall.plus(settings.cooldown());
            PidRecord account = db.pid(pid);
            if (account != null) {
                if (account.status() == PidAvailability.ACTIVE && updatedPids.add(pid)) {
                    pidUpdates.add(account.withStatus(PidAvailability.COOLDOWN));
                }
                cooldownEnds.remove(pid);
                cooldownStarts.removeIf(c -> c.pidId().equals(pid));
                cooldownStarts.add(new Cooldown(pid, until, cause, wall));
            }
            return until;
        }

        void failed(String pid, InstanceKey at, String reason) {
            long retry = now + settings.retryBackoff().toNanos();
            emit(new TermEvent.AddFailed(pid, at, reason, retry));
            alerts.add("PID " + pid + " could not be taken up by " + at + ": " + reason);
            if (state.failures(pid) >= settings.maxFailures()
                    && !state.cooldowns().containsKey(pid)) {
                int failures = state.failures(pid);
                Instant until = startCooldown(
                        pid, "could not be taken up " + failures + " times in a row; last by " + at + ": " + reason);
                alerts.add("ALERT PID " + pid + " failed " + failures + " times; cooldown for " + settings.cooldown()
                        + " (until " + until + ")");
            }
        }

        /**
         * The holder reported a login failure or conflict: cooldown (once; a report seen again while the
         * PID cools down changes nothing) and an alert. Withdrawing the PID is the caller's part.
         */
        void reported(ZkView.PidEntry entry, HealthReport report) {
            String pid = entry.pidId();
            if (state.cooldowns().containsKey(pid)) {
                return;
            }
            Instant until = startCooldown(pid, report.describe() + " reported by " + entry.holder());
            alerts.add("ALERT PID " + pid + " " + report.describe() + " reported by " + entry.holder()
                    + "; cooldown for " + settings.cooldown() + " (until " + until + "), withdrawn from the instance");
        }

        // ---------------------------------------------------------------- housekeeping

        void housekeeping() {
            Set<String> liveInstructions = new HashSet<>();
            Collection<ZkView.PidEntry> entries;
            if (scope.full()) {
                entries = view.allPidNodes();
            } else {
                entries = new ArrayList<>();
                for (String pid : scope.dirtyPids()) {
                    entries.addAll(view.nodesOf(pid));
                }
            }
            for (ZkView.PidEntry entry : entries) {
                String path = entry.entry().path();
                if (state.inFlight(path) || state.pidInFlight(entry.pidId())) {
                    continue;
                }
                ZkView.InstanceEntry instance = live(entry.holder());
                if (instance == null) {
                    if (entry.node() != null && entry.node().hasReport()) {
                        // the reporter left right after reporting: the PID still cools down (the
                        // placement releases the node after the grace period and adds it nowhere)
                        reported(entry, entry.node().report());
                    }
                    continue; // a departed holder: the placement releases it after the grace period
                }
                long session = instance.sessionId();
                PidNode node = entry.node();
                if (node == null || node.ownerSessionId() != session) {
                    repair(entry, session, node == null ? entry.problem() : "owner session mismatch");
                    continue;
                }
                if (node.hasReport()) {
                    reported(entry, node.report());
                    if (node.state() == PidState.ADDED || node.state() == PidState.UPDATED) {
                        revoke(entry, node, "holder reported " + node.report().kind());
                        continue;
                    }
                    if (node.state() == PidState.ADDING && node.hasError()) {
                        // not a failure to count: the holder told why, and the cooldown covers it
                        remove(entry, "ADDING failed with a report: " + node.error());
                        continue;
                    }
                }
                switch (node.state()) {
                    case DELETED -> {
                        if (!state.revokeSent(path)) {
                            emit(new TermEvent.Draining(entry.holder(), now));
                        }
                        remove(entry, "acknowledged DELETED");
                    }
                    case ADDING -> {
                        if (node.hasError()) {
                            remove(entry, "ADDING failed: " + node.error());
                            failed(entry.pidId(), entry.holder(), node.error());
                        } else if (node.epoch().isOlderThan(epoch)) {
                            restamp(entry, node, Intent.Kind.ADD);
                        } else if (unanswered(instructionKey(entry), liveInstructions)) {
                            revoke(entry, node, "no answer to ADDING within " + settings.ackTimeout());
                            failed(entry.pidId(), entry.holder(), "no answer within " + settings.ackTimeout());
                        }
                    }
                    case ADDED, UPDATED -> {
                        if (node.hasError()) {
                            // taking it up again after a suspension failed: the holder logged out and
                            // holds nothing, as after a failed ADDING
                            remove(entry, node.state() + " taken up again failed: " + node.error());
                            failed(entry.pidId(), entry.holder(), node.error());
                            continue;
                        }
                        if (node.state() == PidState.ADDED && state.failures(entry.pidId()) > 0) {
                            emit(new TermEvent.AddSucceeded(entry.pidId()));
                        }
                        // compared field by field: a full pass asks this for every held PID
                        PidRecord account = wantedAccount(entry);
                        if (account != null && !DbView.carries(account, node.account())) {
                            update(entry, node, DbView.payload(account), "account changed");
                        }
                    }
                    case UPDATING -> {
                        if (node.hasError()) {
                            revoke(entry, node, "UPDATING failed: " + node.error());
                        } else {
                            AccountPayload wanted = wantedPayload(entry);
                            if (node.epoch().isOlderThan(epoch)) {
                                update(entry, node, wanted != null ? wanted : node.account(), "re-stamp");
                            } else if (wanted != null && !wanted.equals(node.account())) {
                                update(entry, node, wanted, "account changed again");
                            }
                        }
                    }
                    case DELETING -> {
                        if (node.hasError()) {
                            logoutFailed(entry, node, liveInstructions);
                        } else if (node.epoch().isOlderThan(epoch)) {
                            restamp(entry, node, Intent.Kind.REVOKE);
                        } else if (unanswered(instructionKey(entry), liveInstructions)) {
                            alertOnce(
                                    "stuck:" + instructionKey(entry),
                                    "ALERT " + entry.holder() + " has not answered DELETING of " + entry.pidId()
                                            + " within " + settings.ackTimeout());
                        }
                    }
                }
            }
            List<String> gone = new ArrayList<>();
            for (String path : state.revokesSent()) {
                if (view.node(path) == null && !state.inFlight(path)) {
                    gone.add(path);
                }
            }
            if (!gone.isEmpty()) {
                emit(new TermEvent.RevokesForgotten(gone));
            }
            if (!scope.full()) {
                return; // which instructions are gone is known only after looking at all of them
            }
            List<String> stale = new ArrayList<>();
            for (String key : state.instructionKeys()) {
                if (!liveInstructions.contains(key)) {
                    stale.add(key);
                }
            }
            if (!stale.isEmpty()) {
                emit(new TermEvent.InstructionsForgotten(stale));
            }
        }

        /**
         * The holder answered DELETING with an error: its {@code onRevoked} threw, so it may still be
         * logged in. The node stays (the PID is handed to nobody, nothing is re-sent) until the holder's
         * grace period ({@link #graceOf}) has passed since this leader first saw the failure; then it is
         * removed and the PID is free. If the holder leaves first, the node waits for the grace after its
         * departure like every node of a departed instance. A new leader starts the wait over.
         */
        void logoutFailed(ZkView.PidEntry entry, PidNode node, Set<String> liveInstructions) {
            String key = "logout-failed:" + instructionKey(entry);
            liveInstructions.add(key); // kept while the node is there (InstructionsForgotten otherwise)
            Long seen = state.instructionSeen(key);
            if (seen == null) {
                emit(new TermEvent.InstructionSeen(key, now));
                alertOnce(
                        key,
                        "ALERT PID " + entry.pidId() + " could not be logged out by " + entry.holder() + " ("
                                + node.error() + "); it stays with the instance for its grace period ("
                                + TimeUnit.NANOSECONDS.toMillis(graceOf(entry.holder())) + " ms), then is freed");
                return;
            }
            if (now - seen >= graceOf(entry.holder())) {
                remove(entry, "logout failed (" + node.error() + "), grace over");
            }
        }

        /** An instruction's identity: node incarnation and data version (built only for instructions). */
        String instructionKey(ZkView.PidEntry entry) {
            return entry.entry().path() + "@" + entry.entry().stat().czxid() + ":"
                    + entry.entry().stat().mzxid();
        }

        /** Whether the instruction under {@code key} has waited longer than the ack timeout. */
        boolean unanswered(String key, Set<String> liveInstructions) {
            liveInstructions.add(key);
            Long seen = state.instructionSeen(key);
            if (seen == null) {
                emit(new TermEvent.InstructionSeen(key, now));
                return false;
            }
            return now - seen >= settings.ackTimeout().toNanos();
        }

        void alertOnce(String key, String message) {
            if (!state.alerted(key)) {
                emit(new TermEvent.Alerted(key));
                alerts.add(message);
            }
        }

        AccountPayload wantedPayload(ZkView.PidEntry entry) {
            PidRecord account = wantedAccount(entry);
            return account == null ? null : DbView.payload(account);
        }

        PidRecord wantedAccount(ZkView.PidEntry entry) {
            PidRecord account = db.pid(entry.pidId());
            return account == null || !account.module().equals(entry.holder().module()) ? null : account;
        }

        /**
         * A node the SDK cannot read or would ignore, under a live instance that may have held the PID
         * before it was spoiled: overwrite it with a well-formed DELETING, wait for DELETED.
         */
        void repair(ZkView.PidEntry entry, long session, String problem) {
            PidRecord account = db.pid(entry.pidId());
            AccountPayload payload = account != null ? DbView.payload(account) : null;
            if (payload == null && entry.node() != null) {
                payload = entry.node().account();
            }
            if (payload == null) {
                alertOnce(
                        "malformed:" + entry.entry().path(),
                        "ALERT PID node " + entry.entry().path() + " is unusable (" + problem
                                + ") and names an unknown PID; left alone");
                return;
            }
            alertOnce(
                    "repair:" + entry.entry().path() + "@"
                            + entry.entry().stat().mzxid(),
                    "ALERT PID node " + entry.entry().path() + " is unusable (" + problem + "); revoking it");
            PidNode deleting = PidNode.instruction(entry.pidId(), PidState.DELETING, epoch, session, payload);
            write(
                    Intent.Kind.REVOKE,
                    entry.holder(),
                    entry.pidId(),
                    List.of(new ZkWrite.SetData(
                            entry.entry().path(),
                            deleting.encode(),
                            entry.entry().stat().version())),
                    Map.of(),
                    "repair: " + problem);
        }

        void remove(ZkView.PidEntry entry, String why) {
            write(
                    Intent.Kind.REMOVE_NODE,
                    entry.holder(),
                    entry.pidId(),
                    List.of(new ZkWrite.Delete(
                            entry.entry().path(), entry.entry().stat().version())),
                    Map.of(entry.entry().path(), entry.entry().stat().czxid()),
                    why);
        }

        void revoke(ZkView.PidEntry entry, PidNode node, String why) {
            rewrite(
                    entry,
                    node,
                    PidState.DELETING.assertCanFollow(node.state()),
                    node.account(),
                    Intent.Kind.REVOKE,
                    why);
        }

        /**
         * An unanswered instruction of an earlier leader: the SDK ignores instructions older than the
         * newest epoch it has seen, so send it again stamped with this epoch.
         */
        void restamp(ZkView.PidEntry entry, PidNode node, Intent.Kind kind) {
            rewrite(
                    entry,
                    node,
                    node.state().assertCanFollow(node.state()),
                    node.account(),
                    kind,
                    "re-stamp " + node.state() + " of epoch " + node.epoch().value());
        }

        void update(ZkView.PidEntry entry, PidNode node, AccountPayload payload, String why) {
            rewrite(entry, node, PidState.UPDATING.assertCanFollow(node.state()), payload, Intent.Kind.UPDATE, why);
        }

        /** The holder's node with a new instruction of this epoch, as a versioned write. */
        private void rewrite(
                ZkView.PidEntry entry,
                PidNode node,
                PidState state,
                AccountPayload payload,
                Intent.Kind kind,
                String why) {
            PidNode next = new PidNode(node.pidId(), state, epoch, node.ownerSessionId(), payload, "");
            write(
                    kind,
                    entry.holder(),
                    entry.pidId(),
                    List.of(new ZkWrite.SetData(
                            entry.entry().path(),
                            next.encode(),
                            entry.entry().stat().version())),
                    Map.of(),
                    why);
        }

        boolean write(
                Intent.Kind kind,
                InstanceKey holder,
                String pid,
                List<ZkWrite> writes,
                Map<String, Long> deleted,
                String why) {
            for (ZkWrite w : writes) {
                if (touched.contains(w.path()) || state.inFlight(w.path())) {
                    return false;
                }
            }
            if (pid != null && (touchedPids.contains(pid) || state.pidInFlight(pid))) {
                return false;
            }
            writes.forEach(w -> touched.add(w.path()));
            if (pid != null) {
                touchedPids.add(pid);
            }
            decided(new Intent(kind, holder, pid, writes, deleted, why));
            return true;
        }

        // ---------------------------------------------------------------- handshakes

        void handshakes() {
            for (ModuleKey module : view.modules()) {
                for (ZkView.InstanceEntry instance : view.instances(module).values()) {
                    if (!instance.entry().stat().isEphemeral()) {
                        continue;
                    }
                    InstanceKey key = instance.key();
                    String expected = layout.pids(module, key.instance());
                    boolean pidsNode = view.pidsNodes(module).containsKey(key.instance());
                    InstanceNode data = instance.node() != null ? instance.node() : InstanceNode.registering(1, "");
                    boolean pointed = instance.node() != null
                            && expected.equals(instance.node().pidsPath());
                    if (pidsNode && pointed) {
                        continue;
                    }
                    List<ZkWrite> writes = new ArrayList<>();
                    if (!pidsNode) {
                        // a copy of the registration outlives the ephemeral instance node: its callback
                        // deadline still counts in the grace once the instance is gone (graceOf)
                        writes.add(new ZkWrite.Create(
                                expected, data.withPidsPath(expected).encode(), CreateMode.PERSISTENT));
                    }
                    if (!pointed) {
                        writes.add(new ZkWrite.SetData(
                                instance.entry().path(),
                                data.withPidsPath(expected).encode(),
                                instance.entry().stat().version()));
                    }
                    if (write(Intent.Kind.HANDSHAKE, key, null, writes, Map.of(), "handshake")) {
                        handshaking.add(key);
                    }
                }
            }
        }

        /**
         * Whether PID nodes may be written for this instance now: its handshake is done, or written in
         * this pass, or on its way. docs/design.md §5's order (pids node, its path in the instance node, then the
         * share as ADDING) is kept without waiting a round trip for the handshake's answer: the leader
         * writes through one session, whose requests ZooKeeper applies in order, and the intents of a
         * pass are submitted in order (handshakes before the placement's adds), so the creates reach the
         * server behind the pids node and the pointer. If the handshake fails, the creates under a
         * missing pids node fail too (NONODE: nothing is held, the PIDs are placed again), or land under
         * an existing one the SDK lists once it is pointed at it (it reads the children that are there
         * when it starts watching).
         */
        boolean ready(InstanceKey key) {
            ZkView.InstanceEntry instance = live(key);
            if (instance != null && (handshaking.contains(key) || state.handshakeInFlight(key))) {
                return true;
            }
            String expected = layout.pids(key.module(), key.instance());
            return instance != null
                    && instance.node() != null
                    && expected.equals(instance.node().pidsPath())
                    && view.pidsNodes(key.module()).containsKey(key.instance())
                    && !state.inFlight(expected)
                    && !state.inFlight(instance.entry().path());
        }

        // ---------------------------------------------------------------- placement

        void place(PlacementPolicy policy) {
            if (!scope.placement()) {
                return;
            }
            Set<ModuleKey> modules = new TreeSet<>(db.moduleKeys());
            modules.addAll(view.modules());
            Map<ModuleKey, List<String>> wantedIds = new HashMap<>();
            Map<ModuleKey, Map<String, Long>> cooling = new HashMap<>();
            ModuleKey lastModule = null;
            List<String> lastIds = null;
            for (PidRecord account : db.pids().values()) {
                // a PID in cooldown is desired but cooling: the planner itself sees it as unassignable
                boolean wanted = account.status().assignable() || account.status() == PidAvailability.COOLDOWN;
                if (wanted && !state.backingOff(account.id(), now)) {
                    Long until = state.cooldowns().get(account.id());
                    if (until != null) {
                        cooling.computeIfAbsent(account.module(), k -> new HashMap<>())
                                .put(account.id(), until);
                    } else if (account.status() == PidAvailability.COOLDOWN) {
                        // its cooldown ended in this pass; ACTIVE is written after the pass
                        wantedIds.computeIfAbsent(account.module(), k -> new ArrayList<>());
                        continue;
                    }
                    if (!account.module().equals(lastModule)) {
                        lastModule = account.module();
                        lastIds = wantedIds.computeIfAbsent(lastModule, k -> new ArrayList<>());
                    }
                    lastIds.add(account.id());
                }
            }
            // sorted as a TreeSet would be (the planner keeps its input's order), by one sort per module
            Map<ModuleKey, Set<String>> desired = new HashMap<>();
            wantedIds.forEach((module, ids) -> desired.put(module, SortedIds.of(ids)));
            Map<InstanceKey, Map<String, PidState>> pending = new HashMap<>();
            for (Intent add : state.addsInFlight().values()) {
                pending.computeIfAbsent(add.holder(), k -> new TreeMap<>()).put(add.pid(), PidState.ADDING);
            }
            List<ModuleInput> inputs = new ArrayList<>();
            for (ModuleKey module : modules) {
                ModuleConfig config = db.config(module);
                List<LiveInput> live = new ArrayList<>();
                List<DepartedInput> departed = new ArrayList<>();
                for (ZkView.InstanceEntry instance : view.instances(module).values()) {
                    if (!instance.entry().stat().isEphemeral()) {
                        continue;
                    }
                    InstanceKey key = instance.key();
                    Map<String, PidState> pids = new TreeMap<>(pending.getOrDefault(key, Map.of()));
                    view.pidNodes(key).forEach((pid, entry) -> pids.put(pid, liveState(entry, instance.sessionId())));
                    int weight = config.instanceWeights().containsKey(key.instance())
                            ? config.weightOf(key.instance())
                            : instance.node() != null ? instance.node().weight() : 1;
                    live.add(new LiveInput(
                            key.instance(),
                            instance.sessionId(),
                            weight,
                            instance.entry().stat().czxid(),
                            pids,
                            // a returning process names the instance it was: the planner gives it that slot
                            instance.node() != null && instance.node().hasPreviousInstance()
                                    ? InstanceId.of(instance.node().previousInstance())
                                    : null));
                }
                for (InstanceKey key : holders()) {
                    if (!key.module().equals(module) || live(key) != null) {
                        continue;
                    }
                    Map<String, PidState> pids = new TreeMap<>();
                    Set<String> released = new TreeSet<>();
                    long session = state.sessionOf(key);
                    for (var e : view.pidNodes(key).entrySet()) {
                        PidNode node = e.getValue().node();
                        if (node == null) {
                            pids.put(e.getKey(), PidState.ADDED); // unreadable: it may be held
                        } else {
                            pids.put(e.getKey(), node.state());
                            if (node.state() == PidState.DELETED) {
                                released.add(e.getKey());
                            }
                        }
                    }
                    Long at = state.departedAt(key);
                    // the policy counts one grace for every instance; the instance's callback deadline
                    // is passed as a later departure, so that its grace ends where graceOf says. Never
                    // after now (the planner refuses a departure in the future): "now" is still inside
                    // the grace, so the grace check answers the same
                    long departedAt = Math.min(now, (at == null ? now : at) + callbackDeadline(key));
                    departed.add(new DepartedInput(key.instance(), session, departedAt, pids, released));
                }
                inputs.add(new ModuleInput(
                        config,
                        desired.getOrDefault(module, Set.of()),
                        live,
                        departed,
                        cooling.getOrDefault(module, Map.of())));
            }
            PlacementPolicy.Placement placement;
            try {
                placement = policy.plan(inputs, now);
            } catch (RuntimeException e) {
                // the policy refused its input (a bug, or a database that breaks a rule): keep the
                // housekeeping of this pass, place nothing, say so
                alertOnce("placement-failed", "ALERT placement failed: " + e.getMessage());
                return;
            }
            Set<String> active = new HashSet<>();
            for (PlacementPolicy.Signal signal : placement.signals()) {
                if (signal.alert()) {
                    active.add("signal:" + signal.key());
                    alertOnce("signal:" + signal.key(), signal.message());
                } else {
                    log.debug("{}", signal.message());
                }
            }
            for (String key : state.alertKeys()) {
                if (key.startsWith("signal:") && !active.contains(key)) {
                    emit(new TermEvent.AlertCleared(key));
                }
            }
            int steps = placement.steps().size();
            if (steps > 1024) {
                // sized once for what the steps may touch, instead of growing (rehashing) step by step
                touched = resized(touched, steps);
                touchedPids = resized(touchedPids, steps);
            }
            if (!heldHandshakes.isEmpty()) {
                // handshakes that no add of this placement follows go now, before its revokes
                Set<InstanceKey> sharing = new HashSet<>();
                for (PlacementPolicy.Step step : placement.steps()) {
                    if (step instanceof PlacementPolicy.Add add) {
                        sharing.add(new InstanceKey(add.module(), add.instance()));
                    }
                }
                releaseHandshakes(sharing);
            }
            for (PlacementPolicy.Step step : placement.steps()) {
                if (step instanceof PlacementPolicy.Revoke revoke) {
                    applyRevoke(revoke);
                } else if (step instanceof PlacementPolicy.Release release) {
                    applyRelease(release);
                } else if (step instanceof PlacementPolicy.Add add) {
                    applyAdd(add);
                }
            }
            // a pids node with nothing left under it and no instance: remove it
            for (InstanceKey key : holders()) {
                if (live(key) == null && view.pidNodes(key).isEmpty()) {
                    ZkView.Entry pidsNode = view.pidsNodes(key.module()).get(key.instance());
                    if (pidsNode != null) {
                        write(
                                Intent.Kind.REMOVE_PIDS_NODE,
                                key,
                                null,
                                List.of(new ZkWrite.Delete(
                                        pidsNode.path(), pidsNode.stat().version())),
                                Map.of(pidsNode.path(), pidsNode.stat().czxid()),
                                "instance gone, nothing left");
                    }
                }
            }
        }

        private static Set<String> resized(Set<String> set, int more) {
            Set<String> bigger = new HashSet<>((int) ((set.size() + more) / 0.75f) + 1);
            bigger.addAll(set);
            return bigger;
        }

        PidState liveState(ZkView.PidEntry entry, long session) {
            PidNode node = entry.node();
            if (node == null || node.ownerSessionId() != session) {
                return PidState.DELETING; // being repaired: may be held, cannot be kept
            }
            if (node.hasError() && node.state() == PidState.UPDATING) {
                return PidState.DELETING;
            }
            return node.state();
        }

        void applyRevoke(PlacementPolicy.Revoke step) {
            InstanceKey key = new InstanceKey(step.module(), step.instance());
            ZkView.PidEntry entry = view.pidNodes(key).get(step.pid());
            if (entry == null || entry.node() == null || live(key) == null) {
                return;
            }
            PidState current = entry.node().state();
            if (current == PidState.DELETING && entry.node().hasError()) {
                return; // a failed logout waits for the grace period (logoutFailed), never re-sent
            }
            if (PidState.DELETING.canFollow(current)) {
                revoke(entry, entry.node(), step.move() ? "rebalance" : "not wanted here");
            }
        }

        void applyRelease(PlacementPolicy.Release step) {
            InstanceKey key = new InstanceKey(step.module(), step.instance());
            if (live(key) != null) {
                return;
            }
            Long at = state.departedAt(key);
            boolean graceOver = at != null && now - at >= graceOf(key);
            for (ZkView.PidEntry entry : List.copyOf(view.pidNodes(key).values())) {
                boolean released = entry.node() != null && entry.node().state() == PidState.DELETED;
                if (graceOver || released) {
                    remove(entry, graceOver ? "holder gone, grace over" : "released before leaving");
                }
            }
        }

        void applyAdd(PlacementPolicy.Add step) {
            String pid = step.pid();
            PidRecord account = db.pid(pid);
            if (account == null
                    || !account.module().equals(step.module())
                    || !account.status().assignable()
                    || !state.offerable(pid, now)) {
                return;
            }
            InstanceKey key = new InstanceKey(step.module(), step.instance());
            AddTarget target = addTarget(key);
            if (target == null || target.sessionId() != step.sessionId()) {
                return;
            }
            if (state.pidInFlight(pid) || touchedPids.contains(pid)) {
                return;
            }
            String path = ZkLayout.pid(target.pidsPath(), pid);
            ZkView.PidEntry replaced = null;
            for (ZkView.PidEntry other : view.nodesOf(pid)) {
                boolean deleted = other.node() != null && other.node().state() == PidState.DELETED;
                if (!deleted) {
                    return; // somebody may hold it: not free, whatever the policy thinks
                }
                if (other.entry().path().equals(path)) {
                    replaced = other;
                }
            }
            byte[] adding = PidNode.instruction(
                            pid, PidState.ADDING, epoch, target.sessionId(), DbView.payload(account))
                    .encode();
            ZkWrite create = new ZkWrite.Create(path, adding, CreateMode.PERSISTENT);
            if (replaced == null) {
                write(Intent.Kind.ADD, key, pid, List.of(create), Map.of(), "placement");
            } else {
                write(
                        Intent.Kind.ADD,
                        key,
                        pid,
                        List.of(new ZkWrite.Delete(path, replaced.entry().stat().version()), create),
                        Map.of(path, replaced.entry().stat().czxid()),
                        "placement");
            }
        }

        /**
         * The instance as a target of adds in this pass, or {@code null} if it may get none: gone, its
         * handshake neither done nor on its way ({@link #ready}), or closing (whatever it got now would
         * wait for the grace period). Computed once per instance and pass: nothing it depends on
         * changes during the placement (the view does not, and writes count as in flight only after
         * the pass).
         */
        AddTarget addTarget(InstanceKey key) {
            AddTarget target = addTargets.get(key);
            if (target == null) {
                ZkView.InstanceEntry instance = live(key);
                target = instance == null
                                || !ready(key)
                                || state.draining(
                                        key, now, settings.ackTimeout().toNanos())
                        ? AddTarget.NONE
                        : new AddTarget(instance.sessionId(), layout.pids(key.module(), key.instance()));
                addTargets.put(key, target);
            }
            return target == AddTarget.NONE ? null : target;
        }

        // ---------------------------------------------------------------- database rows

        void rows() {
            if (!scope.rows()) {
                return;
            }
            if (!scope.full()) {
                for (String pid : scope.dirtyPids()) {
                    Map<String, Assignment> wanted = new HashMap<>(2);
                    collectRows(view.nodesOf(pid), wanted);
                    Assignment row = wanted.get(pid);
                    if (row != null && row.state() == PidState.ADDING) {
                        // transient: the ack usually follows within milliseconds and changes the row
                        // again; a full pass writes it if the ADDING lasts (halves the row writes of a
                        // hand-out)
                        continue;
                    }
                    if (row != null && !row.equals(state.rows().get(pid))) {
                        rowUpserts.add(row);
                    } else if (row == null && state.rows().containsKey(pid)) {
                        rowRemovals.add(pid);
                    }
                }
                return;
            }
            Map<String, Assignment> wanted = new HashMap<>();
            collectRows(view.allPidNodes(), wanted);
            for (Assignment row : wanted.values()) {
                if (!row.equals(state.rows().get(row.pidId()))) {
                    rowUpserts.add(row);
                }
            }
            for (String pid : state.rows().keySet()) {
                if (!wanted.containsKey(pid)) {
                    rowRemovals.add(pid);
                }
            }
        }

        /** One row per PID with a node, stamped with this epoch; a live claim beats a DELETED node. */
        void collectRows(Collection<ZkView.PidEntry> entries, Map<String, Assignment> wanted) {
            for (ZkView.PidEntry entry : entries) {
                PidNode node = entry.node();
                if (node == null
                        || db.pid(entry.pidId()) == null
                        || !db.configured(entry.holder().module())) {
                    continue;
                }
                Assignment current = wanted.get(entry.pidId());
                if (current != null && current.state() != PidState.DELETED && node.state() == PidState.DELETED) {
                    continue;
                }
                wanted.put(
                        entry.pidId(),
                        new Assignment(
                                entry.pidId(),
                                entry.holder().module(),
                                entry.holder().instance(),
                                node.state(),
                                epoch,
                                node.ownerSessionId()));
            }
        }
    }
}
