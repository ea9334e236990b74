package io.pidpool.core.allocation;

import io.pidpool.core.model.PidState;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The slots of one module while a plan binds live instances to them: which slot each live instance
 * sits in, which are vacant and since when, and which are dropped. A slot outlives its holder, so a
 * replacement (or the same process on a new session) inherits its share; the rules are in {@code
 * docs/planner.md}. Used once, by one {@link ModulePlanner}, then dropped.
 */
final class SlotBinder {
    private final ModuleState previous;
    private final int servers;
    private final long now;
    private final long delayNanos;
    private final List<WorkSlot> slots = new ArrayList<>();

    SlotBinder(ModuleState previous, int servers, long now, long delayNanos) {
        this.previous = previous;
        this.servers = servers;
        this.now = now;
        this.delayNanos = delayNanos;
    }

    /** The slots, in index order once bound. */
    List<WorkSlot> slots() {
        return slots;
    }

    /**
     * The previous slots, with every slot whose holder is no longer live made vacant (a failure, not
     * a graceful leave, goes into {@code recent}), then new slots up to the configured count.
     */
    void vacate(
            Map<InstanceRef, LiveInstance> liveByRef,
            Map<InstanceRef, DepartedInstance> departedByRef,
            Map<InstanceRef, Long> recent) {
        previous.slots().forEach(s -> slots.add(new WorkSlot(s)));
        for (WorkSlot slot : slots) {
            if (slot.holder != null && !liveByRef.containsKey(slot.holder)) {
                DepartedInstance gone = departedByRef.get(slot.holder);
                slot.vacantSince = gone != null ? gone.departedAtNanos() : now;
                slot.lastHolder = slot.holder;
                slot.holder = null;
                if (gone != null && gone.mayHoldAny()) {
                    recent.putIfAbsent(slot.lastHolder, slot.vacantSince); // a failure, not a graceful leave
                }
            }
        }
        while (slots.size() < servers) {
            slots.add(new WorkSlot(now));
        }
    }

    /**
     * Live instances that hold PIDs but no slot (the memory was lost: a new leader) take slots
     * nobody held before, so they do not inherit a departed instance's share on top of their own.
     */
    void bindHoldersToFreshSlots(List<LiveInstance> live) {
        var bound = holders();
        var fresh = new FreshSlots();
        for (LiveInstance instance : live) {
            if (!bound.contains(instance.ref())
                    && instance.pids().values().stream().anyMatch(PidState::mayHold)) {
                fresh.next().holder = instance.ref();
            }
        }
    }

    /** Departed instances no slot remembers (a new leader) vacate a fresh slot each. */
    void attachUnknownDepartures(List<DepartedInstance> departed) {
        var known = new HashSet<InstanceRef>();
        for (WorkSlot slot : slots) {
            known.add(slot.holder);
            known.add(slot.lastHolder);
        }
        List<DepartedInstance> unknown = new ArrayList<>(
                departed.stream().filter(d -> !known.contains(d.ref())).toList());
        unknown.sort(Comparator.comparingLong(d -> d.departedAtNanos() - now));
        var fresh = new FreshSlots();
        for (DepartedInstance instance : unknown) {
            WorkSlot slot = fresh.next();
            slot.lastHolder = instance.ref();
            slot.vacantSince = instance.departedAtNanos();
        }
    }

    /**
     * Drops vacant slots beyond the configured count: every vacancy when the operator lowered the
     * count, otherwise only vacancies whose wait is over (an extra slot of a scale-out lives as long
     * as its share is reserved). Bound slots are never dropped.
     */
    void shrink(boolean braked) {
        boolean operatorShrank = servers < previous.servers();
        index();
        List<WorkSlot> droppable = new ArrayList<>(slots.stream()
                .filter(s -> s.holder == null && (operatorShrank || (!braked && now - s.vacantSince >= delayNanos)))
                .toList());
        droppable.sort(this::dropOrder);
        Set<WorkSlot> dropped = Collections.newSetFromMap(new IdentityHashMap<>());
        for (int i = 0; i < droppable.size() && slots.size() - dropped.size() > servers; i++) {
            dropped.add(droppable.get(i));
        }
        slots.removeIf(dropped::contains);
    }

    /** Which vacancy goes first when slots are dropped: a stale one, then the one keeping fewest PIDs. */
    private int dropOrder(WorkSlot a, WorkSlot b) {
        boolean aExpired = now - a.vacantSince >= delayNanos;
        boolean bExpired = now - b.vacantSince >= delayNanos;
        if (aExpired != bExpired) {
            return aExpired ? -1 : 1;
        }
        int c = Integer.compare(a.previouslyReserved.size(), b.previouslyReserved.size());
        return c != 0 ? c : Integer.compare(b.index, a.index);
    }

    /**
     * Every other live instance without a slot takes a vacant one, or an extra slot when none is
     * vacant (a scale-out). A returning process first: an instance naming a previous instance gets
     * the vacant slot that instance held (its own accounts back after a lost session; the grace still
     * decides when). The rest take the vacancy keeping the most PIDs back (so they are used again at
     * once), then one a departed instance held (its replacement, typically: a restarted container
     * comes back under a new name), then the most recently vacated.
     */
    void bindJoiners(
            List<LiveInstance> live,
            Map<InstanceRef, LiveInstance> liveByRef,
            Map<InstanceRef, DepartedInstance> departedByRef) {
        var bound = holders();
        index();
        List<WorkSlot> vacant =
                new ArrayList<>(slots.stream().filter(s -> s.holder == null).toList());
        vacant.sort(Comparator.<WorkSlot>comparingInt(s -> -claimEstimate(s, departedByRef))
                .thenComparing(s -> s.lastHolder == null)
                .thenComparingLong(s -> now - s.vacantSince)
                .thenComparingInt(s -> s.index));
        for (LiveInstance instance : live) { // registration order: the first to name a slot gets it
            if (instance.previous() == null || bound.contains(instance.ref())) {
                continue;
            }
            for (int i = 0; i < vacant.size(); i++) {
                WorkSlot slot = vacant.get(i);
                if (slot.lastHolder != null && slot.lastHolder.id().equals(instance.previous())) {
                    slot.holder = instance.ref();
                    bound.add(instance.ref());
                    vacant.remove(i);
                    break;
                }
            }
        }
        int next = 0;
        for (LiveInstance instance : live) {
            if (!bound.contains(instance.ref())) {
                WorkSlot slot = next < vacant.size() ? vacant.get(next++) : extra();
                slot.holder = instance.ref();
            }
        }
        for (WorkSlot slot : slots) {
            if (slot.holder != null) {
                slot.weight = liveByRef.get(slot.holder).weight();
            } else if (live.isEmpty()) {
                // nobody to spread a share over: the wait for replacements starts when someone is there
                slot.vacantSince = now;
            }
        }
        index();
    }

    /** Roughly how many PIDs a vacant slot would hand its taker: its reservation plus its departed holder's. */
    private static int claimEstimate(WorkSlot slot, Map<InstanceRef, DepartedInstance> departedByRef) {
        DepartedInstance gone = slot.lastHolder == null ? null : departedByRef.get(slot.lastHolder);
        int fromDeparted = 0;
        if (gone != null) {
            for (PidState state : gone.pids().values()) {
                if (state != PidState.DELETING && state != PidState.DELETED) {
                    fromDeparted++;
                }
            }
        }
        return slot.previouslyReserved.size() + fromDeparted;
    }

    private Set<InstanceRef> holders() {
        var bound = new HashSet<InstanceRef>();
        slots.forEach(s -> bound.add(s.holder));
        return bound;
    }

    /** Hands out, in index order, slots nobody held and nothing is reserved for, then new extra slots. */
    private final class FreshSlots {
        private int next;

        WorkSlot next() {
            while (next < slots.size()) {
                WorkSlot slot = slots.get(next++);
                if (slot.holder == null && slot.lastHolder == null && slot.previouslyReserved.isEmpty()) {
                    return slot;
                }
            }
            WorkSlot slot = extra();
            next = slots.size();
            return slot;
        }
    }

    private WorkSlot extra() {
        var slot = new WorkSlot(now);
        slots.add(slot);
        return slot;
    }

    private void index() {
        for (int i = 0; i < slots.size(); i++) {
            slots.get(i).index = i;
        }
    }
}
