package io.pidpool.server.leader;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The state of one {@link Reconciler} pass, shared by its parts ({@link Housekeeping}, {@link
 * CooldownKeeper}, {@link Placer}, {@link RowSync}): what it looks at, what it has decided so far, and
 * the one way to decide a ZooKeeper write ({@link #write}: one decision per path and PID per pass,
 * nothing about a path or PID already in flight), which also keeps the sending order (handshakes held
 * for their instance's first add, {@link #decided}).
 *
 * <p>Concurrency: not thread-safe; one pass on the leader's serial executor.
 */
final class ReconcilePass {
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
    /** PIDs whose database row this pass changes. */
    final Set<String> updatedPids = new HashSet<>();
    /**
     * Handshakes decided but not sent yet, in decision order: each waits for the first add of its
     * instance (see {@link #decided}).
     */
    final Map<InstanceKey, Intent> heldHandshakes = new LinkedHashMap<>();
    /** Receives each intent when its place in the sending order is final. */
    final Consumer<Intent> sink;

    private Set<InstanceKey> holders;
    final Reconciler.Scope scope;

    ReconcilePass(
            ZkView view,
            DbView db,
            TermBookkeeping state,
            Epoch epoch,
            long grace,
            long now,
            Reconciler.Scope scope,
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

    void alertOnce(String key, String message) {
        if (!state.alerted(key)) {
            emit(new TermEvent.Alerted(key));
            alerts.add(message);
        }
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
        rewrite(entry, node, PidState.DELETING.assertCanFollow(node.state()), node.account(), Intent.Kind.REVOKE, why);
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
            ZkView.PidEntry entry, PidNode node, PidState state, AccountPayload payload, Intent.Kind kind, String why) {
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
}
