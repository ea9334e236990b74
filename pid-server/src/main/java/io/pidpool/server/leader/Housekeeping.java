package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The housekeeping of a pass over the nodes that exist: which instances came, returned or departed,
 * and for every PID node whether its holder answered (acks, failures, reports), whether it must be
 * repaired, re-stamped with this epoch or updated to the database's account. Runs before the
 * placement; cooldowns and failure counts it leaves to {@link CooldownKeeper}.
 */
final class Housekeeping {
    private final ReconcilePass p;
    private final ZkView view;
    private final DbView db;
    private final TermBookkeeping state;
    private final Epoch epoch;
    private final long now;
    private final Reconciler.Scope scope;
    private final LeaderSettings settings;
    private final CooldownKeeper cooldowns;

    Housekeeping(ReconcilePass p, LeaderSettings settings, CooldownKeeper cooldowns) {
        this.p = p;
        this.view = p.view;
        this.db = p.db;
        this.state = p.state;
        this.epoch = p.epoch;
        this.now = p.now;
        this.scope = p.scope;
        this.settings = settings;
        this.cooldowns = cooldowns;
    }

    void departures() {
        Set<InstanceKey> present = new HashSet<>();
        for (ModuleKey module : view.modules()) {
            for (ZkView.InstanceEntry instance : view.instances(module).values()) {
                if (instance.entry().stat().isEphemeral()) {
                    present.add(instance.key());
                    if (state.departedAt(instance.key()) != null) {
                        p.emit(new TermEvent.Returned(instance.key()));
                    }
                    if (state.sessionOf(instance.key()) != instance.sessionId()) {
                        p.emit(new TermEvent.Seen(instance.key(), instance.sessionId()));
                    }
                }
            }
        }
        Set<InstanceKey> holders = p.holders();
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
                p.emit(new TermEvent.Departed(key, now, session));
            }
        }
        for (InstanceKey key : List.copyOf(state.departed())) {
            if (!holders.contains(key)) {
                p.emit(new TermEvent.Forgotten(key));
            }
        }
    }

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
            ZkView.InstanceEntry instance = p.live(entry.holder());
            if (instance == null) {
                if (entry.node() != null && entry.node().hasReport()) {
                    // the reporter left right after reporting: the PID still cools down (the
                    // placement releases the node after the grace period and adds it nowhere)
                    cooldowns.reported(entry, entry.node().report());
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
                cooldowns.reported(entry, node.report());
                if (node.state() == PidState.ADDED || node.state() == PidState.UPDATED) {
                    p.revoke(entry, node, "holder reported " + node.report().kind());
                    continue;
                }
                if (node.state() == PidState.ADDING && node.hasError()) {
                    // not a failure to count: the holder told why, and the cooldown covers it
                    p.remove(entry, "ADDING failed with a report: " + node.error());
                    continue;
                }
            }
            switch (node.state()) {
                case DELETED -> {
                    if (!state.revokeSent(path)) {
                        p.emit(new TermEvent.Draining(entry.holder(), now));
                    }
                    p.remove(entry, "acknowledged DELETED");
                }
                case ADDING -> {
                    if (node.hasError()) {
                        p.remove(entry, "ADDING failed: " + node.error());
                        cooldowns.failed(entry.pidId(), entry.holder(), node.error());
                    } else if (node.epoch().isOlderThan(epoch)) {
                        p.restamp(entry, node, Intent.Kind.ADD);
                    } else if (unanswered(instructionKey(entry), liveInstructions)) {
                        p.revoke(entry, node, "no answer to ADDING within " + settings.ackTimeout());
                        cooldowns.failed(entry.pidId(), entry.holder(), "no answer within " + settings.ackTimeout());
                    }
                }
                case ADDED, UPDATED -> {
                    if (node.hasError()) {
                        // taking it up again after a suspension failed: the holder logged out and
                        // holds nothing, as after a failed ADDING
                        p.remove(entry, node.state() + " taken up again failed: " + node.error());
                        cooldowns.failed(entry.pidId(), entry.holder(), node.error());
                        continue;
                    }
                    if (node.state() == PidState.ADDED && state.failures(entry.pidId()) > 0) {
                        p.emit(new TermEvent.AddSucceeded(entry.pidId()));
                    }
                    // compared field by field: a full pass asks this for every held PID
                    PidRecord account = wantedAccount(entry);
                    if (account != null && !DbView.carries(account, node.account())) {
                        p.update(entry, node, DbView.payload(account), "account changed");
                    }
                }
                case UPDATING -> {
                    if (node.hasError()) {
                        p.revoke(entry, node, "UPDATING failed: " + node.error());
                    } else {
                        AccountPayload wanted = wantedPayload(entry);
                        if (node.epoch().isOlderThan(epoch)) {
                            p.update(entry, node, wanted != null ? wanted : node.account(), "re-stamp");
                        } else if (wanted != null && !wanted.equals(node.account())) {
                            p.update(entry, node, wanted, "account changed again");
                        }
                    }
                }
                case DELETING -> {
                    if (node.hasError()) {
                        logoutFailed(entry, node, liveInstructions);
                    } else if (node.epoch().isOlderThan(epoch)) {
                        p.restamp(entry, node, Intent.Kind.REVOKE);
                    } else if (unanswered(instructionKey(entry), liveInstructions)) {
                        p.alertOnce(
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
            p.emit(new TermEvent.RevokesForgotten(gone));
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
            p.emit(new TermEvent.InstructionsForgotten(stale));
        }
    }

    /**
     * The holder answered DELETING with an error: its {@code onRevoked} threw, so it may still be
     * logged in. The node stays (the PID is handed to nobody, nothing is re-sent) until the holder's
     * grace period ({@link ReconcilePass#graceOf}) has passed since this leader first saw the failure; then it is
     * removed and the PID is free. If the holder leaves first, the node waits for the grace after its
     * departure like every node of a departed instance. A new leader starts the wait over.
     */
    void logoutFailed(ZkView.PidEntry entry, PidNode node, Set<String> liveInstructions) {
        String key = "logout-failed:" + instructionKey(entry);
        liveInstructions.add(key); // kept while the node is there (InstructionsForgotten otherwise)
        Long seen = state.instructionSeen(key);
        if (seen == null) {
            p.emit(new TermEvent.InstructionSeen(key, now));
            p.alertOnce(
                    key,
                    "ALERT PID " + entry.pidId() + " could not be logged out by " + entry.holder() + " ("
                            + node.error() + "); it stays with the instance for its grace period ("
                            + TimeUnit.NANOSECONDS.toMillis(p.graceOf(entry.holder())) + " ms), then is freed");
            return;
        }
        if (now - seen >= p.graceOf(entry.holder())) {
            p.remove(entry, "logout failed (" + node.error() + "), grace over");
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
            p.emit(new TermEvent.InstructionSeen(key, now));
            return false;
        }
        return now - seen >= settings.ackTimeout().toNanos();
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
            p.alertOnce(
                    "malformed:" + entry.entry().path(),
                    "ALERT PID node " + entry.entry().path() + " is unusable (" + problem
                            + ") and names an unknown PID; left alone");
            return;
        }
        p.alertOnce(
                "repair:" + entry.entry().path() + "@" + entry.entry().stat().mzxid(),
                "ALERT PID node " + entry.entry().path() + " is unusable (" + problem + "); revoking it");
        PidNode deleting = PidNode.instruction(entry.pidId(), PidState.DELETING, epoch, session, payload);
        p.write(
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
}
