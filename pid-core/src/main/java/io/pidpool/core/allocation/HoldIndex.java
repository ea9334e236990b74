package io.pidpool.core.allocation;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.util.HashMap;
import java.util.Map;

/**
 * Who may hold each PID, across all modules: live instances in any state but DELETED, and departed
 * instances within the grace period in any state but DELETED unless they released the PID. A PID
 * absent from the index is free: it may be added anywhere.
 */
final class HoldIndex {
    /** One claim on a PID; claims on the same PID form a chain (almost always of length one). */
    static final class Hold {
        final ModuleKey module;
        final InstanceRef instance;
        final PidState state;
        final boolean live;
        final long registrationOrder;
        Hold next;

        Hold(ModuleKey module, InstanceRef instance, PidState state, boolean live, long registrationOrder) {
            this.module = module;
            this.instance = instance;
            this.state = state;
            this.live = live;
            this.registrationOrder = registrationOrder;
        }

        /** A live claim that the module may keep: everything but an unacknowledged DELETING. */
        boolean keepableIn(ModuleKey key) {
            return live && state != PidState.DELETING && module.equals(key);
        }
    }

    private final Map<String, Hold> byPid;

    private HoldIndex(Map<String, Hold> byPid) {
        this.byPid = byPid;
    }

    static HoldIndex build(ClusterSnapshot snapshot, long nowNanos, long graceNanos) {
        int size = 0;
        for (ModuleSnapshot module : snapshot.modules()) {
            for (LiveInstance instance : module.live()) {
                size += instance.pids().size();
            }
        }
        var byPid = new HashMap<String, Hold>(size * 4 / 3 + 16);
        for (ModuleSnapshot module : snapshot.modules()) {
            ModuleKey key = module.key();
            for (LiveInstance instance : module.live()) {
                InstanceRef ref = instance.ref();
                for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
                    if (node.getValue().mayHold()) {
                        link(
                                byPid,
                                node.getKey(),
                                new Hold(key, ref, node.getValue(), true, instance.registrationOrder()));
                    }
                }
            }
            for (DepartedInstance instance : module.departed()) {
                if (nowNanos - instance.departedAtNanos() >= graceNanos) {
                    continue;
                }
                InstanceRef ref = instance.ref();
                for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
                    if (instance.mayHold(node.getKey())) {
                        link(byPid, node.getKey(), new Hold(key, ref, node.getValue(), false, Long.MAX_VALUE));
                    }
                }
            }
        }
        return new HoldIndex(byPid);
    }

    private static void link(Map<String, Hold> byPid, String pid, Hold hold) {
        Hold first = byPid.putIfAbsent(pid, hold);
        if (first != null) {
            hold.next = first.next;
            first.next = hold;
        }
    }

    /** The first claim on {@code pid}, or {@code null} when the PID is free. */
    Hold claims(String pid) {
        return byPid.get(pid);
    }

    /**
     * The live instance of {@code module} that keeps {@code pid} when several claim it: an
     * acknowledged state beats ADDING, then the earlier registration, then the smaller reference.
     * {@code null} when no live instance of the module may keep it.
     */
    static Hold keeper(Hold first, ModuleKey module) {
        if (first == null) {
            return null;
        }
        if (first.next == null) {
            return first.keepableIn(module) ? first : null;
        }
        Hold best = null;
        for (Hold hold = first; hold != null; hold = hold.next) {
            if (hold.keepableIn(module) && (best == null || beats(hold, best))) {
                best = hold;
            }
        }
        return best;
    }

    private static boolean beats(Hold a, Hold b) {
        boolean aAcked = a.state != PidState.ADDING;
        boolean bAcked = b.state != PidState.ADDING;
        if (aAcked != bAcked) {
            return aAcked;
        }
        if (a.registrationOrder != b.registrationOrder) {
            return a.registrationOrder < b.registrationOrder;
        }
        return a.instance.compareTo(b.instance) < 0;
    }
}
