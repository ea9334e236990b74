package io.pidpool.client.internal;

import io.pidpool.client.PidAccount;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.HealthReport;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SDK side of docs/design.md §4 as a pure decision table: it takes observations (a PID node's content,
 * a callback's outcome, a write's result, suspend/resume/close) and answers with {@link Action}s
 * (call the listener, write an acknowledgement). It does no I/O and reads no clock, so every rule is
 * unit-tested without ZooKeeper.
 *
 * <p>Rules, per PID:
 *
 * <ul>
 *   <li>At most one thing in flight: a callback <em>or</em> a write (one exception: a revocation
 *       because granting stopped does not wait for an acknowledgement in flight). New observations
 *       are remembered and acted on when it completes, so callbacks for one PID never overlap and
 *       {@code onAssigned} never starts while {@code onRevoked} runs.
 *   <li>Listener before ack: ADDED/UPDATED/DELETED is written only after the callback returned; a
 *       failed callback is written as {@code node.failed(reason)} (state unchanged).
 *   <li>Only nodes owned by this session count; instructions (-ING states) older than the highest
 *       epoch seen in any node are ignored. ADDED/UPDATED nodes are this client's own answers and are
 *       taken up again after a suspension whatever their epoch.
 *   <li>While not granting (suspended, lease expired, paused) or closing, every held PID is revoked
 *       at once — also one whose acknowledgement is still in flight — and nothing is assigned. On
 *       close every node of this session is answered DELETED (after its {@code onRevoked}
 *       returned), so the leader may move it at once.
 *   <li>A node that disappears, changes owner, turns DELETED or becomes unreadable while held is
 *       revoked: the client holds a PID only while its node says so.
 * </ul>
 *
 * <p><b>One class.</b> The rules are one decision table over one entry per PID: {@link #reconcile}
 * reads every field that an observation, an outcome or a write result sets, so the table stays in
 * one file where its invariants (one thing in flight, listener before ack) can be checked together.
 *
 * <p>Concurrency: not thread-safe. Confined to the client's state thread, which owns all held-PID
 * state; callbacks and ZooKeeper replies reach it as posted tasks.
 */
final class PidTracker {
    private static final Logger log = LoggerFactory.getLogger(PidTracker.class);

    /** How often close() tries to write DELETED into one node before giving up on it. */
    static final int MAX_CLOSE_WRITES = 3;

    /** Account payload of the report written over an unreadable node (the real one is unknown). */
    private static final AccountPayload UNKNOWN_ACCOUNT =
            new AccountPayload(0, 0, new SealedSecret("unknown", new byte[] {0}), Map.of());

    enum WriteResult {
        OK,
        BAD_VERSION,
        NO_NODE,
        FAILED
    }

    private enum Kind {
        ASSIGN,
        UPDATE,
        REVOKE
    }

    /** {@code grants}: {@link #grants} when the call was decided. */
    private record InFlight(Kind kind, NodeView view, long grants) {}

    private static final class Entry {
        final String pid;
        /** The newest observation; {@code null} once the node is gone. */
        NodeView latest;

        long lastMzxid = -1;
        /** Non-null while held: the account the listener was given. */
        PidAccount held;

        AccountPayload heldPayload;
        InFlight inFlight;
        Action.Write pendingWrite;
        /** A write answering this observation met BadVersion: wait for newer content. */
        long staleMzxid = -1;
        /** A callback for this observation failed: report {@link #failedReason} instead of acting again. */
        long failedMzxid = -1;

        String failedReason;
        /** A call for this observation did not start (lease not valid): decide it again on resume. */
        long deferredMzxid = -1;

        long reportedMzxid = -1;
        long loggedIgnoredMzxid = -1;
        int closeWrites;
        /** The user's report about the account, until a write of this session carried it. */
        HealthReport healthReport;
        /**
         * Why the last {@code onRevoked} failed ({@code null}: it did not): the client may still be
         * logged in, so it never answers DELETED until an {@code onAssigned} succeeds again.
         */
        String logoutFailed;

        Entry(String pid) {
            this.pid = pid;
        }

        boolean idle() {
            return inFlight == null && pendingWrite == null;
        }
    }

    private final Map<String, Entry> entries = new HashMap<>();
    private final Set<String> held = new TreeSet<>();
    private boolean heldChanged;
    private long generation;
    private long sessionId;
    private Epoch highestEpoch = Epoch.NONE;
    private boolean granting;
    private boolean closing;
    /**
     * Counts {@link #resume()} and {@link #resetSession}: both clear every deferral, but not that of a
     * call still in flight, so its "did not start" is compared with the count it was decided under.
     */
    private long grants;

    long generation() {
        return generation;
    }

    long sessionId() {
        return sessionId;
    }

    Epoch highestEpoch() {
        return highestEpoch;
    }

    boolean granting() {
        return granting;
    }

    /**
     * A new registration ({@code sessionId} ≠ 0) or none ({@code 0}): everything observed so far is
     * forgotten, every held PID is revoked, granting stops until {@link #resume()}. Callbacks still
     * running finish first; their PIDs are then revoked if needed.
     */
    List<Action> resetSession(long newSessionId) {
        generation++;
        grants++;
        sessionId = newSessionId;
        granting = false;
        List<Action> actions = new ArrayList<>();
        for (Entry e : List.copyOf(entries.values())) {
            e.latest = null;
            e.lastMzxid = -1;
            e.pendingWrite = null;
            e.staleMzxid = -1;
            e.failedMzxid = -1;
            e.failedReason = null;
            e.deferredMzxid = -1;
            e.reportedMzxid = -1;
            e.loggedIgnoredMzxid = -1;
            e.closeWrites = 0;
            e.healthReport = null; // the leader withdraws a new session's PIDs anew; a report was for the old one
            e.logoutFailed = null; // the old session's nodes wait for the grace period anyway
            actions.addAll(reconcile(e));
        }
        return actions;
    }

    /** Stop granting: revoke every held PID (SUSPENDED, lease expired, process paused). */
    List<Action> suspend() {
        granting = false;
        return reconcileAll();
    }

    /** Grant again (same session confirmed alive): act on every node, taking held PIDs up again. */
    List<Action> resume() {
        granting = true;
        grants++;
        entries.values().forEach(e -> e.deferredMzxid = -1);
        return reconcileAll();
    }

    /** Close: revoke everything, then answer every node of this session DELETED. */
    List<Action> close() {
        closing = true;
        granting = false;
        return reconcileAll();
    }

    /**
     * Whether this session has observed (read or written) the node of {@code pid} at transaction
     * {@code zxid} or later: a notification of that transaction then needs no read.
     */
    boolean covers(String pid, long zxid) {
        Entry e = entries.get(pid);
        return e != null && e.latest != null && zxid <= e.lastMzxid;
    }

    /** Whether a write of this PID's node is queued or in flight. */
    boolean writing(String pid) {
        Entry e = entries.get(pid);
        return e != null && e.pendingWrite != null;
    }

    /** PIDs whose node this session believes exists. */
    List<String> observed() {
        List<String> pids = new ArrayList<>();
        entries.forEach((pid, e) -> {
            if (e.latest != null) {
                pids.add(pid);
            }
        });
        return pids;
    }

    /** A node was created or changed (or re-read). Older observations than one already seen are dropped. */
    List<Action> onNode(NodeView view) {
        if (view.generation() != generation) {
            return List.of();
        }
        Entry e = entries.computeIfAbsent(view.name(), Entry::new);
        if (view.mzxid() <= e.lastMzxid) {
            return List.of();
        }
        e.latest = view;
        e.lastMzxid = view.mzxid();
        if (view.node() != null && highestEpoch.isOlderThan(view.node().epoch())) {
            highestEpoch = view.node().epoch();
        }
        return reconcile(e);
    }

    List<Action> onNodeDeleted(long viewGeneration, String pid) {
        Entry e = entries.get(pid);
        if (viewGeneration != generation || e == null) {
            return List.of();
        }
        e.latest = null;
        return reconcile(e);
    }

    List<Action> onCallbackDone(String pid, Outcome outcome) {
        Entry e = entries.get(pid);
        if (e == null || e.inFlight == null) {
            log.error("PID {}: callback outcome {} without a callback in flight (ignored)", pid, outcome);
            return List.of();
        }
        InFlight done = e.inFlight;
        e.inFlight = null;
        if (outcome instanceof Outcome.Assigned a) {
            e.logoutFailed = null;
            hold(e, a.account(), done.view().node().account());
        } else if (outcome instanceof Outcome.Updated u) {
            hold(e, u.after(), done.view().node().account());
        } else if (outcome instanceof Outcome.Failed f) {
            e.failedMzxid = done.view() == null ? -1 : done.view().mzxid();
            e.failedReason = f.reason();
        } else if (outcome instanceof Outcome.Overran o) {
            // abandoned at the deadline: report it like a failure, but first log out, since the login
            // may have got through (onUpdated: the PID was held; onAssigned: the listener had the account)
            e.failedMzxid = done.view() == null ? -1 : done.view().mzxid();
            e.failedReason = o.reason();
            if (e.held != null) {
                return revoke(e, o.reason());
            }
            if (o.account() != null) {
                e.inFlight = new InFlight(Kind.REVOKE, e.latest, grants);
                return List.of(new Action.Revoke(e.pid, o.account(), o.reason()));
            }
        } else if (outcome instanceof Outcome.Revoked) {
            e.logoutFailed = null;
        } else if (outcome instanceof Outcome.RevokeFailed f) {
            e.logoutFailed = f.reason(); // the PID left `held` when the revocation was decided
        } else if (outcome instanceof Outcome.NotStarted && done.grants() == grants) {
            // wait for the next resume; if one came while the call was in flight (its thread found the
            // lease invalid, then the state thread resumed before this outcome arrived), that resume
            // is the one to act on: decide again now, or the PID waits for a resume that never comes
            e.deferredMzxid = done.view() == null ? -1 : done.view().mzxid();
        }
        return reconcile(e);
    }

    /** The result of a {@link Action.Write}; {@code written} is the node as written (for OK). */
    List<Action> onWriteDone(Action.Write write, WriteResult result, NodeView written) {
        Entry e = entries.get(write.pid());
        if (e == null || e.pendingWrite != write) {
            return List.of(); // a write of an earlier session
        }
        e.pendingWrite = null;
        switch (result) {
            case OK -> {
                if (e.healthReport != null && e.healthReport.equals(write.node().report())) {
                    e.healthReport = null; // delivered: the leader reads it from the node
                }
                if (written.mzxid() > e.lastMzxid) {
                    e.latest = written;
                    e.lastMzxid = written.mzxid();
                }
            }
            case BAD_VERSION -> e.staleMzxid = write.baseMzxid();
            case NO_NODE -> e.latest = null;
            case FAILED -> {
                if (!closing) {
                    return List.of(); // retried on the next observation or resume
                }
            }
        }
        return reconcile(e);
    }

    /**
     * The user reports a login failure or conflict for {@code pid}. Accepted when this session has a
     * node for the PID (held, being assigned — e.g. reported from inside {@code onAssigned} — or being
     * revoked); it travels in the next write of that node, or in a write of its own when nothing else
     * is due (a held PID). The leader then puts the PID into cooldown and withdraws it.
     *
     * @return the actions, or {@code null} if this session has no node for the PID
     */
    List<Action> report(String pid, HealthReport report) {
        Entry e = entries.get(pid);
        if (e == null
                || e.latest == null
                || e.latest.isMalformed()
                || e.latest.node().ownerSessionId() != sessionId
                || closing) {
            return null;
        }
        e.healthReport = report;
        return reconcile(e);
    }

    /** Nothing in flight and nothing left to write for close (or anything else). */
    boolean isQuiescent() {
        for (Entry e : entries.values()) {
            if (!e.idle() || (closing && needsCloseWrite(e))) {
                return false;
            }
        }
        return true;
    }

    /** PIDs held now (onAssigned returned, onRevoked not yet called). */
    Set<String> heldIds() {
        return Collections.unmodifiableSet(new TreeSet<>(held));
    }

    /** The held set if it changed since the last call, else {@code null}. */
    Set<String> takeHeldIfChanged() {
        if (!heldChanged) {
            return null;
        }
        heldChanged = false;
        return Set.copyOf(held);
    }

    private List<Action> reconcileAll() {
        List<Action> actions = new ArrayList<>();
        for (Entry e : List.copyOf(entries.values())) {
            actions.addAll(reconcile(e));
        }
        return actions;
    }

    /** Decides the next step for one PID from its newest observation; the heart of the protocol. */
    private List<Action> reconcile(Entry e) {
        if ((closing || !granting) && e.held != null && e.inFlight == null) {
            // no listener call is running; also while our answer (ADDED/UPDATED) is pending: in a
            // partition its reply comes only once the session is gone, and the hold must end within the lease
            return revoke(e, closing ? RevokeCause.CLOSING : RevokeCause.NOT_ALIVE);
        }
        if (!e.idle()) {
            return List.of();
        }
        NodeView v = e.latest;
        if (v == null) {
            if (e.held != null) {
                return revoke(e, "its node was deleted");
            }
            entries.remove(e.pid);
            return List.of();
        }
        if (closing || !granting) {
            // held PIDs were revoked above
            return closing && needsCloseWrite(e) ? closeWrite(e) : List.of();
        }
        if (v.mzxid() == e.staleMzxid) {
            return List.of(); // our answer to it was refused (BadVersion): wait for the newer content
        }
        if (v.mzxid() == e.deferredMzxid) {
            return List.of(); // its call could not start (lease not valid): wait for resume()
        }
        if (v.isMalformed()) {
            if (e.held != null) {
                return revoke(e, RevokeCause.NODE_UNREADABLE);
            }
            return reportMalformed(e, v);
        }
        PidNode n = v.node();
        if (n.ownerSessionId() != sessionId) {
            if (e.held != null) {
                return revoke(e, "its node now belongs to another session");
            }
            logIgnored(e, v, "it is for session 0x%x, this client is 0x%x", n.ownerSessionId(), sessionId);
            return List.of();
        }
        if (n.state().isInstruction() && n.hasError()) {
            return List.of(); // a failure report (ours), waiting for the leader to withdraw the PID
        }
        if (n.state().isInstruction() && n.epoch().isOlderThan(highestEpoch)) {
            logIgnored(e, v, "its epoch %d is older than %d", n.epoch().value(), highestEpoch.value());
            return List.of();
        }
        if (e.failedMzxid == v.mzxid()) {
            return n.hasError() ? List.of() : write(e, v, n.failed(e.failedReason));
        }
        return switch (n.state()) {
            case ADDING, UPDATING -> {
                if (e.held == null) {
                    yield assign(e, v);
                }
                yield n.account().equals(e.heldPayload) ? write(e, v, n.acknowledged()) : update(e, v);
            }
            // our own answers: held already, or taken up again after a suspension; a pending report
            // about a held PID goes out on its own
            case ADDED, UPDATED -> {
                if (e.held != null) {
                    yield e.healthReport != null && !e.healthReport.equals(n.report())
                            ? write(e, v, n.withReport(e.healthReport))
                            : List.of();
                }
                yield n.hasError() || n.hasReport() ? List.of() : assign(e, v);
            }
            case DELETING -> {
                if (e.held != null) {
                    yield revoke(e, "the leader asked for it (DELETING)");
                }
                // a failed logout is reported, not answered DELETED: the leader then frees the PID only
                // after the grace period
                yield write(e, v, e.logoutFailed != null ? n.failed(e.logoutFailed) : n.acknowledged());
            }
            case DELETED -> e.held != null ? revoke(e, "its node says DELETED") : List.of();
        };
    }

    private boolean needsCloseWrite(Entry e) {
        NodeView v = e.latest;
        return v != null
                && e.held == null
                && !v.isMalformed()
                && v.node().ownerSessionId() == sessionId
                && v.node().state() != PidState.DELETED
                && v.mzxid() != e.staleMzxid
                && e.logoutFailed == null // never DELETED after a failed logout: the node waits for the grace
                && e.closeWrites < MAX_CLOSE_WRITES;
    }

    /** On close the SDK answers DELETED whatever the state (docs/design.md §4.3, graceful close): it holds nothing. */
    private List<Action> closeWrite(Entry e) {
        e.closeWrites++;
        PidNode n = e.latest.node();
        PidNode released = new PidNode(n.pidId(), PidState.DELETED, n.epoch(), n.ownerSessionId(), n.account(), "");
        return write(e, e.latest, released);
    }

    private List<Action> reportMalformed(Entry e, NodeView v) {
        if (e.reportedMzxid == v.mzxid()) {
            return List.of();
        }
        e.reportedMzxid = v.mzxid();
        log.warn("PID node {} is unreadable, reporting it: {}", v.path(), v.malformed());
        PidNode report;
        try {
            report = new PidNode(
                    v.name(),
                    PidState.ADDING,
                    Epoch.NONE,
                    sessionId,
                    UNKNOWN_ACCOUNT,
                    "malformed node data: " + v.malformed());
        } catch (RuntimeException invalidName) {
            return List.of(); // the node name is not even a PID id: nothing sensible to write
        }
        return write(e, v, report);
    }

    private List<Action> assign(Entry e, NodeView v) {
        e.inFlight = new InFlight(Kind.ASSIGN, v, grants);
        return List.of(new Action.Assign(e.pid, v));
    }

    private List<Action> update(Entry e, NodeView v) {
        e.inFlight = new InFlight(Kind.UPDATE, v, grants);
        return List.of(new Action.Update(e.pid, e.held, v));
    }

    private List<Action> revoke(Entry e, String why) {
        PidAccount account = e.held;
        e.inFlight = new InFlight(Kind.REVOKE, e.latest, grants);
        e.held = null;
        e.heldPayload = null;
        held.remove(e.pid);
        heldChanged = true;
        return List.of(new Action.Revoke(e.pid, account, why));
    }

    private void hold(Entry e, PidAccount account, AccountPayload payload) {
        e.held = account;
        e.heldPayload = payload;
        heldChanged |= held.add(e.pid);
    }

    private List<Action> write(Entry e, NodeView v, PidNode node) {
        if (e.healthReport != null && node.pidId().equals(e.pid)) {
            node = node.withReport(e.healthReport); // every answer carries a pending report
        }
        Action.Write w = new Action.Write(e.pid, generation, v.path(), node, v.version(), v.mzxid());
        e.pendingWrite = w;
        return List.of(w);
    }

    private void logIgnored(Entry e, NodeView v, String template, Object... args) {
        if (e.loggedIgnoredMzxid != v.mzxid()) {
            e.loggedIgnoredMzxid = v.mzxid();
            log.info("Ignoring PID node {} because {}", v.path(), String.format(template, args));
        }
    }
}
