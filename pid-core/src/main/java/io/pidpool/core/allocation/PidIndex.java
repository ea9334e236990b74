package io.pidpool.core.allocation;

import static io.pidpool.core.error.Preconditions.requireArgument;

import io.pidpool.core.model.PidState;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every PID the plan touches, hashed once: which module wants it and who may hold it, across all
 * modules. Claims are live instances in any state but DELETED, and departed instances within the
 * grace period in any state but DELETED unless they released the PID. A PID without claims is free:
 * it may be added anywhere. Each live instance's nodes are resolved to entries while building, so
 * the per-module passes do no further hashing.
 *
 * <p>Layout: the PID names are the only objects; everything else is arrays indexed by an entry, a
 * claim or an owner number, and the name → entry table is {@link java.util.HashMap}'s chaining with
 * the chains in int arrays. At 100,000 PIDs this allocates a handful of arrays instead of
 * 300,000 small objects (map nodes, entries, claims), which was most of the planner's time and all
 * of its garbage (docs/benchmarks.md, session 3).
 */
final class PidIndex {
    private static final PidState[] STATES = PidState.values();
    private static final byte DELETING = (byte) PidState.DELETING.ordinal();
    private static final byte ADDING = (byte) PidState.ADDING.ordinal();
    static final int NONE = -1;

    // name -> entry: chained like java.util.HashMap (same bucket function, so names that hash alike
    // stay near each other), but the chain is an int array: bucket -> first entry + 1, entry -> next
    private int[] buckets;

    private int mask;

    /** Per entry: the PID, the module that wants it ({@link #NONE}) and its first claim ({@link #NONE}: free). */
    private String[] pids;

    private int[] hashes;
    private int[] nextInBucket;
    private int[] moduleOf;
    private int[] firstClaim;
    private int entries;

    /** Per claim: its owner, its state (ordinal), the next claim on the same PID. */
    private int[] claimOwner;

    private byte[] claimState;
    private int[] claimNext;
    private int claims;

    /** Per owner (every live instance, and every departed one within the grace). */
    private final int[] ownerModule;

    private final boolean[] ownerLive;
    private final long[] ownerOrder;
    private final InstanceRef[] ownerRef;
    private int owners;

    /** Live owner {@code o}'s nodes are {@code nodeEntry/nodeState[nodeStart[o] .. nodeEnd[o])}, in map order. */
    private final int[] nodeStart;

    private final int[] nodeEnd;
    private final int[] nodeEntry;
    private final byte[] nodeState;
    private int nodes;

    /** Module {@code m}'s desired entries are {@code desiredStart[m] .. desiredStart[m + 1]}, in desired order. */
    private final int[] desiredStart;

    private final Map<LiveInstance, Integer> liveOwner = new IdentityHashMap<>();

    private PidIndex(int modules, int desired, int liveNodes, int ownerCount) {
        buckets = new int[bucketsFor(desired)];
        mask = buckets.length - 1;
        // PIDs held but wanted by no module are few; the arrays grow if not
        int entryCapacity = desired + liveNodes / 16 + 16;
        pids = new String[entryCapacity];
        hashes = new int[entryCapacity];
        nextInBucket = new int[entryCapacity];
        moduleOf = new int[entryCapacity];
        firstClaim = new int[entryCapacity];
        int claimCapacity = Math.max(16, liveNodes);
        claimOwner = new int[claimCapacity];
        claimState = new byte[claimCapacity];
        claimNext = new int[claimCapacity];
        ownerModule = new int[ownerCount];
        ownerLive = new boolean[ownerCount];
        ownerOrder = new long[ownerCount];
        ownerRef = new InstanceRef[ownerCount];
        nodeStart = new int[ownerCount];
        nodeEnd = new int[ownerCount];
        nodeEntry = new int[liveNodes];
        nodeState = new byte[liveNodes];
        desiredStart = new int[modules + 1];
    }

    /**
     * Indexes the snapshot; rejects a PID desired by two modules with
     * {@link io.pidpool.core.error.ErrorCode#INVALID_ARGUMENT} on field {@code desiredPids}.
     */
    static PidIndex build(ClusterSnapshot snapshot, long nowNanos, long graceNanos) {
        List<ModuleSnapshot> modules = snapshot.modules();
        int desired = 0;
        int liveNodes = 0;
        int ownerCount = 0;
        for (ModuleSnapshot module : modules) {
            desired += module.desiredPids().size();
            for (LiveInstance instance : module.live()) {
                liveNodes += instance.pids().size();
            }
            ownerCount += module.live().size() + module.departed().size();
        }
        var index = new PidIndex(modules.size(), desired, liveNodes, ownerCount);
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            index.desiredStart[m] = index.entries;
            for (String pid : module.desiredPids()) {
                int entry = index.entry(pid);
                int other = index.moduleOf[entry];
                requireArgument(
                        other == NONE,
                        "desiredPids",
                        "PID %s is desired by both %s and %s",
                        pid,
                        other == NONE ? null : modules.get(other).key(),
                        module.key());
                index.moduleOf[entry] = m;
            }
        }
        index.desiredStart[modules.size()] = index.entries;
        for (int m = 0; m < modules.size(); m++) {
            ModuleSnapshot module = modules.get(m);
            for (LiveInstance instance : module.live()) {
                int owner = index.owner(m, instance.ref(), true, instance.registrationOrder());
                index.liveOwner.put(instance, owner);
                index.nodeStart[owner] = index.nodes;
                instance.pids().forEach((pid, state) -> {
                    int entry = index.entry(pid);
                    index.nodeEntry[index.nodes] = entry;
                    index.nodeState[index.nodes++] = (byte) state.ordinal();
                    if (state.mayHold()) {
                        index.link(entry, owner, state);
                    }
                });
                index.nodeEnd[owner] = index.nodes;
            }
            for (DepartedInstance instance : module.departed()) {
                if (nowNanos - instance.departedAtNanos() >= graceNanos) {
                    continue;
                }
                int owner = index.owner(m, instance.ref(), false, Long.MAX_VALUE);
                instance.pids().forEach((pid, state) -> {
                    if (state.mayHold() && !instance.released().contains(pid)) {
                        index.link(index.entry(pid), owner, state);
                    }
                });
            }
        }
        return index;
    }

    // ------------------------------------------------------------------ queries

    int desiredStart(int module) {
        return desiredStart[module];
    }

    int desiredEnd(int module) {
        return desiredStart[module + 1];
    }

    String pid(int entry) {
        return pids[entry];
    }

    /** The module that wants the entry's PID, or {@link #NONE}. */
    int module(int entry) {
        return moduleOf[entry];
    }

    /** Whether anyone (live or departed within the grace, any module) may hold the PID. */
    boolean claimed(int entry) {
        return firstClaim[entry] != NONE;
    }

    /** The entry of {@code pid}, or {@link #NONE} when the snapshot neither wants nor holds it. */
    int find(String pid) {
        int hash = pid.hashCode();
        for (int entry = buckets[bucket(hash)] - 1; entry != NONE; entry = nextInBucket[entry]) {
            if (hashes[entry] == hash) {
                String name = pids[entry];
                if (name == pid || name.equals(pid)) {
                    return entry;
                }
            }
        }
        return NONE;
    }

    /** The owner number of a live instance of the snapshot. */
    int liveOwner(LiveInstance instance) {
        return liveOwner.get(instance);
    }

    int nodeStart(int owner) {
        return nodeStart[owner];
    }

    int nodeEnd(int owner) {
        return nodeEnd[owner];
    }

    int nodeEntry(int node) {
        return nodeEntry[node];
    }

    PidState nodeState(int node) {
        return STATES[nodeState[node]];
    }

    /**
     * The owner (a live instance of {@code module}) that keeps the PID when several claim it: an
     * acknowledged state beats ADDING, then the earlier registration, then the smaller reference.
     * {@link #NONE} when no live instance of the module may keep it.
     */
    int keeper(int entry, int module) {
        int first = firstClaim[entry];
        if (first == NONE) {
            return NONE;
        }
        if (claimNext[first] == NONE) {
            return keepableIn(first, module) ? claimOwner[first] : NONE;
        }
        int best = NONE;
        for (int claim = first; claim != NONE; claim = claimNext[claim]) {
            if (keepableIn(claim, module) && (best == NONE || beats(claim, best))) {
                best = claim;
            }
        }
        return best == NONE ? NONE : claimOwner[best];
    }

    /** A live claim that the module may keep: everything but an unacknowledged DELETING. */
    private boolean keepableIn(int claim, int module) {
        int owner = claimOwner[claim];
        return ownerLive[owner] && claimState[claim] != DELETING && ownerModule[owner] == module;
    }

    private boolean beats(int claim, int other) {
        boolean acked = claimState[claim] != ADDING;
        if (acked != (claimState[other] != ADDING)) {
            return acked;
        }
        int a = claimOwner[claim];
        int b = claimOwner[other];
        if (ownerOrder[a] != ownerOrder[b]) {
            return ownerOrder[a] < ownerOrder[b];
        }
        return ownerRef[a].compareTo(ownerRef[b]) < 0;
    }

    // ------------------------------------------------------------------ building

    private int owner(int module, InstanceRef ref, boolean live, long order) {
        int owner = owners++;
        ownerModule[owner] = module;
        ownerLive[owner] = live;
        ownerOrder[owner] = order;
        ownerRef[owner] = ref;
        return owner;
    }

    /** A power of two with room for {@code entries} at a load of 3/4. */
    private static int bucketsFor(int entries) {
        return Integer.highestOneBit(Math.max(16, entries + entries / 3) - 1) << 1;
    }

    /** {@link java.util.HashMap}'s spread: the high bits matter too, neighbours stay neighbours. */
    private int bucket(int hash) {
        return (hash ^ (hash >>> 16)) & mask;
    }

    /** The entry of {@code pid}, created (wanted by nobody, free) if absent. */
    private int entry(String pid) {
        int hash = pid.hashCode();
        int bucket = bucket(hash);
        for (int entry = buckets[bucket] - 1; entry != NONE; entry = nextInBucket[entry]) {
            if (hashes[entry] == hash) {
                String name = pids[entry];
                if (name == pid || name.equals(pid)) {
                    return entry;
                }
            }
        }
        int entry = entries++;
        if (entry == pids.length) {
            int grown = pids.length * 2;
            pids = Arrays.copyOf(pids, grown);
            hashes = Arrays.copyOf(hashes, grown);
            nextInBucket = Arrays.copyOf(nextInBucket, grown);
            moduleOf = Arrays.copyOf(moduleOf, grown);
            firstClaim = Arrays.copyOf(firstClaim, grown);
        }
        pids[entry] = pid;
        hashes[entry] = hash;
        moduleOf[entry] = NONE;
        firstClaim[entry] = NONE;
        nextInBucket[entry] = buckets[bucket] - 1;
        buckets[bucket] = entry + 1;
        if (entries > buckets.length - buckets.length / 4) {
            rehash();
        }
        return entry;
    }

    private void rehash() {
        buckets = new int[buckets.length * 2];
        mask = buckets.length - 1;
        for (int entry = 0; entry < entries; entry++) {
            int bucket = bucket(hashes[entry]);
            nextInBucket[entry] = buckets[bucket] - 1;
            buckets[bucket] = entry + 1;
        }
    }

    private void link(int entry, int owner, PidState state) {
        int claim = claims++;
        if (claim == claimOwner.length) {
            int grown = claimOwner.length * 2;
            claimOwner = Arrays.copyOf(claimOwner, grown);
            claimState = Arrays.copyOf(claimState, grown);
            claimNext = Arrays.copyOf(claimNext, grown);
        }
        claimOwner[claim] = owner;
        claimState[claim] = (byte) state.ordinal();
        claimNext[claim] = firstClaim[entry];
        firstClaim[entry] = claim;
    }
}
