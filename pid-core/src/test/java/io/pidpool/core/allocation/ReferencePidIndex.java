package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.PidState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every PID the plan touches, hashed once: which module wants it and who may hold it, across all
 * modules. Claims are live instances in any state but DELETED, and departed instances within the
 * grace period in any state but DELETED unless they released the PID. A PID without claims is free:
 * it may be added anywhere. Each live instance's nodes are resolved to entries while building, so
 * the per-module passes do no further hashing (100,000 PIDs cost two hash operations each).
 */
final class ReferencePidIndex {
    /** One PID. */
    static final class Entry {
        final String pid;
        /** Index of the module that wants the PID, or -1. */
        int module = -1;
        /** The first claim; claims form a chain (almost always of length one). {@code null}: free. */
        Claim claims;

        Entry(String pid) {
            this.pid = pid;
        }

        /**
         * The live instance of {@code module} that keeps the PID when several claim it: an
         * acknowledged state beats ADDING, then the earlier registration, then the smaller
         * reference. {@code null} when no live instance of the module may keep it.
         */
        Claim keeper(int module) {
            Claim first = claims;
            if (first == null) {
                return null;
            }
            if (first.next == null) {
                return first.keepableIn(module) ? first : null;
            }
            Claim best = null;
            for (Claim claim = first; claim != null; claim = claim.next) {
                if (claim.keepableIn(module) && (best == null || claim.beats(best))) {
                    best = claim;
                }
            }
            return best;
        }
    }

    /** One instance's claim on one PID. */
    static final class Claim {
        final int module;
        final Nodes owner;
        final PidState state;
        Claim next;

        Claim(int module, Nodes owner, PidState state) {
            this.module = module;
            this.owner = owner;
            this.state = state;
        }

        /** A live claim that the module may keep: everything but an unacknowledged DELETING. */
        boolean keepableIn(int key) {
            return owner.live && state != PidState.DELETING && module == key;
        }

        private boolean beats(Claim other) {
            boolean acked = state != PidState.ADDING;
            if (acked != (other.state != PidState.ADDING)) {
                return acked;
            }
            if (owner.registrationOrder != other.owner.registrationOrder) {
                return owner.registrationOrder < other.owner.registrationOrder;
            }
            return owner.ref.compareTo(other.owner.ref) < 0;
        }
    }

    /** An instance's PID nodes, resolved to entries, in the instance's map order. */
    static final class Nodes {
        final InstanceRef ref;
        final boolean live;
        final long registrationOrder;
        final Entry[] entries;
        final PidState[] states;

        Nodes(InstanceRef ref, boolean live, long registrationOrder, int size) {
            this.ref = ref;
            this.live = live;
            this.registrationOrder = registrationOrder;
            this.entries = new Entry[size];
            this.states = new PidState[size];
        }
    }

    /** Per module (by index in the snapshot): the desired PIDs' entries, in desired order. */
    final List<List<Entry>> desired;
    /** Every live instance's nodes. */
    final Map<LiveInstance, Nodes> liveNodes;

    private ReferencePidIndex(List<List<Entry>> desired, Map<LiveInstance, Nodes> liveNodes) {
        this.desired = desired;
        this.liveNodes = liveNodes;
    }

    /**
     * Indexes the snapshot; rejects a PID desired by two modules with
     * {@link io.pidpool.core.error.ErrorCode#INVALID_ARGUMENT} on field {@code desiredPids}.
     */
    static ReferencePidIndex build(ClusterSnapshot snapshot, long nowNanos, long graceNanos) {
        List<ModuleSnapshot> modules = snapshot.modules();
        int size = 0;
        for (ModuleSnapshot module : modules) {
            size += module.desiredPids().size();
        }
        var byPid = new HashMap<String, Entry>(size * 4 / 3 + 64);
        List<List<Entry>> desired = new ArrayList<>(modules.size());
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            List<Entry> entries = new ArrayList<>(module.desiredPids().size());
            for (String pid : module.desiredPids()) {
                Entry entry = new Entry(pid);
                Entry other = byPid.putIfAbsent(pid, entry);
                requireArgument(
                        other == null,
                        "desiredPids",
                        "PID %s is desired by both %s and %s",
                        pid,
                        other == null ? null : modules.get(other.module).key(),
                        module.key());
                entry.module = m;
                entries.add(entry);
            }
            desired.add(entries);
        }
        var liveNodes = new IdentityHashMap<LiveInstance, Nodes>();
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            for (LiveInstance instance : module.live()) {
                var nodes = new Nodes(
                        instance.ref(),
                        true,
                        instance.registrationOrder(),
                        instance.pids().size());
                int k = 0;
                for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
                    Entry entry = entry(byPid, node.getKey());
                    nodes.entries[k] = entry;
                    nodes.states[k++] = node.getValue();
                    if (node.getValue().mayHold()) {
                        link(entry, new Claim(m, nodes, node.getValue()));
                    }
                }
                liveNodes.put(instance, nodes);
            }
            for (DepartedInstance instance : module.departed()) {
                if (nowNanos - instance.departedAtNanos() >= graceNanos) {
                    continue;
                }
                var nodes = new Nodes(instance.ref(), false, Long.MAX_VALUE, 0);
                for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
                    if (instance.mayHold(node.getKey())) {
                        link(entry(byPid, node.getKey()), new Claim(m, nodes, node.getValue()));
                    }
                }
            }
        }
        return new ReferencePidIndex(desired, liveNodes);
    }

    private static Entry entry(Map<String, Entry> byPid, String pid) {
        Entry entry = byPid.get(pid);
        if (entry == null) {
            entry = new Entry(pid);
            byPid.put(pid, entry);
        }
        return entry;
    }

    private static void link(Entry entry, Claim claim) {
        claim.next = entry.claims;
        entry.claims = claim;
    }
}
