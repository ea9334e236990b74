package io.pidpool.server.leader;

import io.pidpool.core.allocation.ClusterSnapshot;
import io.pidpool.core.allocation.DepartedInstance;
import io.pidpool.core.allocation.LiveInstance;
import io.pidpool.core.allocation.ModuleSnapshot;
import io.pidpool.core.allocation.Plan;
import io.pidpool.core.allocation.PlanSignal;
import io.pidpool.core.allocation.PlanStep;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.ZkWrite;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.zookeeper.CreateMode;

/**
 * The placement of a pass: builds the core planner's {@link ClusterSnapshot} from the views, asks the
 * {@link PlacementPolicy} where every desired PID belongs, and turns the {@link PlanStep}s it returns
 * into writes: revokes (the plan's deletes) and releases first, then the adds. Its {@link PlanSignal}s
 * become alerts or debug lines ({@link PlanSignals}). An add is written only when the leader's own view
 * proves the PID free (no node of it anywhere except DELETED ones, no write about it in flight).
 */
final class Placer {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Reconciler.class);

    /** A live, ready instance that may get adds in this pass: its session and its pids node. */
    private record AddTarget(long sessionId, String pidsPath) {
        static final AddTarget NONE = new AddTarget(0, "");
    }

    private final ReconcilePass p;
    private final ZkView view;
    private final DbView db;
    private final TermBookkeeping state;
    private final Epoch epoch;
    private final long now;
    private final Reconciler.Scope scope;
    private final Map<InstanceKey, Intent> heldHandshakes;
    private final ZkLayout layout;
    private final LeaderSettings settings;
    /** {@link #addTarget}, per instance. */
    private final Map<InstanceKey, AddTarget> addTargets = new HashMap<>();

    private final Handshakes handshakes;

    Placer(ReconcilePass p, ZkLayout layout, LeaderSettings settings, Handshakes handshakes) {
        this.p = p;
        this.view = p.view;
        this.db = p.db;
        this.state = p.state;
        this.epoch = p.epoch;
        this.now = p.now;
        this.scope = p.scope;
        this.heldHandshakes = p.heldHandshakes;
        this.layout = layout;
        this.settings = settings;
        this.handshakes = handshakes;
    }

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
        Plan plan;
        try {
            // the snapshot's records check their input too: a refusal there is the policy's refusal
            plan = policy.plan(snapshot(modules, desired, cooling, pending), now);
        } catch (RuntimeException e) {
            // the policy refused its input (a bug, or a database that breaks a rule): keep the
            // housekeeping of this pass, place nothing, say so
            p.alertOnce("placement-failed", "ALERT placement failed: " + e.getMessage());
            return;
        }
        Set<String> active = new HashSet<>();
        for (PlanSignal signal : plan.signals()) {
            String key = PlanSignals.alertKey(signal);
            if (key != null) {
                active.add("signal:" + key);
                p.alertOnce("signal:" + key, PlanSignals.describe(signal));
            } else if (log.isDebugEnabled()) {
                log.debug("{}", PlanSignals.describe(signal));
            }
        }
        for (String key : state.alertKeys()) {
            if (key.startsWith("signal:") && !active.contains(key)) {
                p.emit(new TermEvent.AlertCleared(key));
            }
        }
        int steps = plan.steps().size();
        if (steps > 1024) {
            // sized once for what the steps may touch, instead of growing (rehashing) step by step
            p.touched = resized(p.touched, steps);
            p.touchedPids = resized(p.touchedPids, steps);
        }
        if (!heldHandshakes.isEmpty()) {
            // handshakes that no add of this placement follows go now, before its revokes
            Set<InstanceKey> sharing = new HashSet<>();
            for (PlanStep.Add add : plan.adds()) {
                sharing.add(new InstanceKey(add.module(), add.instance().id()));
            }
            p.releaseHandshakes(sharing);
        }
        for (PlanStep step : plan.steps()) {
            if (step instanceof PlanStep.Delete revoke) {
                applyRevoke(revoke);
            } else if (step instanceof PlanStep.Release release) {
                applyRelease(release);
            } else if (step instanceof PlanStep.Add add) {
                applyAdd(add);
            }
        }
        // a pids node with nothing left under it and no instance: remove it
        for (InstanceKey key : p.holders()) {
            if (p.live(key) == null && view.pidNodes(key).isEmpty()) {
                ZkView.Entry pidsNode = view.pidsNodes(key.module()).get(key.instance());
                if (pidsNode != null) {
                    p.write(
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

    /**
     * The planner's input: per module the desired PIDs, the live instances (their nodes plus the adds
     * in flight to them) and the departed ones, and the cooldowns.
     */
    private ClusterSnapshot snapshot(
            Set<ModuleKey> modules,
            Map<ModuleKey, Set<String>> desired,
            Map<ModuleKey, Map<String, Long>> cooling,
            Map<InstanceKey, Map<String, PidState>> pending) {
        List<ModuleSnapshot> snapshots = new ArrayList<>(modules.size());
        for (ModuleKey module : modules) {
            ModuleConfig config = db.config(module);
            List<LiveInstance> live = new ArrayList<>();
            List<DepartedInstance> departed = new ArrayList<>();
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
                live.add(new LiveInstance(
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
            for (InstanceKey key : p.holders()) {
                if (!key.module().equals(module) || p.live(key) != null) {
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
                long departedAt = Math.min(now, (at == null ? now : at) + p.callbackDeadline(key));
                departed.add(new DepartedInstance(key.instance(), session, departedAt, pids, released));
            }
            snapshots.add(new ModuleSnapshot(
                    config,
                    desired.getOrDefault(module, Set.of()),
                    live,
                    departed,
                    cooling.getOrDefault(module, Map.of())));
        }
        return new ClusterSnapshot(snapshots);
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

    void applyRevoke(PlanStep.Delete step) {
        InstanceKey key = new InstanceKey(step.module(), step.instance().id());
        ZkView.PidEntry entry = view.pidNodes(key).get(step.pid());
        if (entry == null || entry.node() == null || p.live(key) == null) {
            return;
        }
        PidState current = entry.node().state();
        if (current == PidState.DELETING && entry.node().hasError()) {
            return; // a failed logout waits for the grace period (logoutFailed), never re-sent
        }
        if (PidState.DELETING.canFollow(current)) {
            p.revoke(entry, entry.node(), step.reason().isMove() ? "rebalance" : "not wanted here");
        }
    }

    void applyRelease(PlanStep.Release step) {
        InstanceKey key = new InstanceKey(step.module(), step.instance().id());
        if (p.live(key) != null) {
            return;
        }
        Long at = state.departedAt(key);
        boolean graceOver = at != null && now - at >= p.graceOf(key);
        for (ZkView.PidEntry entry : List.copyOf(view.pidNodes(key).values())) {
            boolean released = entry.node() != null && entry.node().state() == PidState.DELETED;
            if (graceOver || released) {
                p.remove(entry, graceOver ? "holder gone, grace over" : "released before leaving");
            }
        }
    }

    void applyAdd(PlanStep.Add step) {
        String pid = step.pid();
        PidRecord account = db.pid(pid);
        if (account == null
                || !account.module().equals(step.module())
                || !account.status().assignable()
                || !state.offerable(pid, now)) {
            return;
        }
        InstanceKey key = new InstanceKey(step.module(), step.instance().id());
        AddTarget target = addTarget(key);
        if (target == null || target.sessionId() != step.instance().sessionId()) {
            return;
        }
        if (state.pidInFlight(pid) || p.touchedPids.contains(pid)) {
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
        byte[] adding = PidNode.instruction(pid, PidState.ADDING, epoch, target.sessionId(), DbView.payload(account))
                .encode();
        ZkWrite create = new ZkWrite.Create(path, adding, CreateMode.PERSISTENT);
        if (replaced == null) {
            p.write(Intent.Kind.ADD, key, pid, List.of(create), Map.of(), "placement");
        } else {
            p.write(
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
     * handshake neither done nor on its way ({@link Handshakes#ready}), or closing (whatever it got now would
     * wait for the grace period). Computed once per instance and pass: nothing it depends on
     * changes during the placement (the view does not, and writes count as in flight only after
     * the pass).
     */
    AddTarget addTarget(InstanceKey key) {
        AddTarget target = addTargets.get(key);
        if (target == null) {
            ZkView.InstanceEntry instance = p.live(key);
            target = instance == null
                            || !handshakes.ready(key)
                            || state.draining(key, now, settings.ackTimeout().toNanos())
                    ? AddTarget.NONE
                    : new AddTarget(instance.sessionId(), layout.pids(key.module(), key.instance()));
            addTargets.put(key, target);
        }
        return target == AddTarget.NONE ? null : target;
    }
}
