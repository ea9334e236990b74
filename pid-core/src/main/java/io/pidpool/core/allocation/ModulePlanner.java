package io.pidpool.core.allocation;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Plans one module for {@link AllocationPlanner}. Used once, by one thread, then dropped.
 *
 * <p>The arithmetic is described in {@code docs/planner.md}; in short: live instances and vacant
 * slots still awaiting their replacement are the <em>units</em> of the balance. The module's PIDs
 * are split over the units by largest remainder (ties to the unit that would keep more); vacant
 * units take only free PIDs, never a live instance's; what they cannot take is split again over
 * the live units; a live unit above its target gives the surplus (a move), one below it receives
 * free PIDs.
 */
final class ModulePlanner {
    /** A slot while one plan works on it. */
    private static final class WorkSlot {
        InstanceRef holder;
        InstanceRef lastHolder;
        long vacantSince;
        int weight;
        final Set<String> previouslyReserved;
        int index;
        Unit unit;

        WorkSlot(SlotState state) {
            holder = state.holder();
            lastHolder = state.lastHolder();
            vacantSince = state.vacantSinceNanos();
            weight = state.weight();
            previouslyReserved = state.reserved();
        }

        WorkSlot(long now) {
            vacantSince = now;
            weight = 1;
            previouslyReserved = Set.of();
        }
    }

    /** A unit of the balance: a live instance (bound to a slot or not) or a reserved vacant slot. */
    private static final class Unit {
        final LiveInstance live;
        /** {@code live}'s reference, made once (every step of the unit carries it). */
        final InstanceRef ref;

        final WorkSlot slot;
        final int weight;
        final int tieOrder;
        final ArrayList<String> keptAcked = new ArrayList<>();
        final ArrayList<String> keptAdding = new ArrayList<>();
        final ArrayList<String> attributedFree = new ArrayList<>();
        final ArrayList<String> attributedInFlight = new ArrayList<>();
        int floor;
        long remainder;
        int target;
        List<String> waitingFor = List.of();
        /** Its own attributed PIDs this plan adds to it: kept attributed until the adds show up. */
        List<String> givenBack = List.of();

        List<String> reservation = List.of();
        int need;

        Unit(LiveInstance live, WorkSlot slot, int weight, int tieOrder) {
            this.live = live;
            this.ref = live == null ? null : live.ref();
            this.slot = slot;
            this.weight = weight;
            this.tieOrder = tieOrder;
        }

        int kept() {
            return keptAcked.size() + keptAdding.size();
        }

        /** What the unit holds or will get without taking anything from another unit. */
        int claim() {
            return kept() + attributedFree.size() + attributedInFlight.size();
        }

        /** Unacknowledged adds go first: withdrawing them interrupts nobody's work. */
        String takeForDelete() {
            return keptAdding.isEmpty()
                    ? keptAcked.remove(keptAcked.size() - 1)
                    : keptAdding.remove(keptAdding.size() - 1);
        }
    }

    /**
     * Who gets the +1s of largest-remainder rounding: larger remainder first (weights), then a unit
     * that would otherwise have to give a PID away (this is what makes the movement minimal), then
     * the larger claim (a replacement inherits its slot's whole share), then the larger holding,
     * then the earlier registration.
     */
    private static final Comparator<Unit> ROUNDING_ORDER = (a, b) -> {
        int c = Long.compare(b.remainder, a.remainder);
        if (c != 0) {
            return c;
        }
        c = Boolean.compare(b.kept() > b.floor, a.kept() > a.floor);
        if (c != 0) {
            return c;
        }
        c = Integer.compare(b.claim(), a.claim());
        if (c != 0) {
            return c;
        }
        c = Integer.compare(b.kept(), a.kept());
        return c != 0 ? c : Integer.compare(a.tieOrder, b.tieOrder);
    };

    private final ModuleSnapshot module;
    private final ModuleKey key;
    private final ModuleState previous;
    private final int moduleIndex;
    private final PidIndex index;
    private final PlannerPolicy policy;
    private final long graceNanos;
    private final long delayNanos;
    private final long windowNanos;
    private final long now;

    final List<PlanStep> deletes = new ArrayList<>();
    final List<PlanStep> releases = new ArrayList<>();
    final List<PlanStep> adds = new ArrayList<>();
    final List<PlanSignal> signals = new ArrayList<>();
    ModuleState nextState;

    ModulePlanner(
            ModuleSnapshot module,
            int moduleIndex,
            ModuleState previous,
            PidIndex index,
            PlannerPolicy policy,
            long now) {
        this.module = module;
        this.key = module.key();
        this.previous = previous;
        this.moduleIndex = moduleIndex;
        this.index = index;
        this.policy = policy;
        this.graceNanos = policy.grace().toNanos();
        // a module may set its own delay (ModuleConfig.rebalanceDelay); null: the policy's
        java.time.Duration own = module.config().rebalanceDelay();
        this.delayNanos = (own == null ? policy.rebalanceDelay() : own).toNanos();
        this.windowNanos = policy.brakeWindow().toNanos();
        this.now = now;
    }

    /** Plans the module; returns the number of rebalancing moves started (at most {@code moveBudget}). */
    int plan(int moveBudget) {
        List<LiveInstance> live = new ArrayList<>(module.live());
        live.sort(Comparator.comparingLong(LiveInstance::registrationOrder).thenComparing(LiveInstance::id));
        var liveByRef = new HashMap<InstanceRef, LiveInstance>();
        var liveIds = new HashSet<InstanceId>();
        for (LiveInstance instance : live) {
            liveByRef.put(instance.ref(), instance);
            liveIds.add(instance.id());
        }
        List<DepartedInstance> departed = new ArrayList<>(module.departed());
        departed.sort(Comparator.comparing(DepartedInstance::ref));
        var departedByRef = new HashMap<InstanceRef, DepartedInstance>();
        departed.forEach(d -> departedByRef.put(d.ref(), d));

        planReleases(departed, liveIds);
        var recent = new HashMap<>(previous.recentDepartures());
        List<WorkSlot> slots = vacate(liveByRef, departedByRef, recent);
        while (slots.size() < module.config().servers()) {
            slots.add(new WorkSlot(now));
        }
        bindHoldersToFreshSlots(live, slots);
        attachUnknownDepartures(departed, slots);
        boolean braked = applyBrake(recent, departed, live.size());
        shrink(slots, braked);
        bindJoiners(live, liveByRef, departedByRef, slots);

        // the units of the balance
        var slotByHolder = new HashMap<InstanceRef, WorkSlot>();
        slots.stream().filter(s -> s.holder != null).forEach(s -> slotByHolder.put(s.holder, s));
        List<Unit> liveUnits = new ArrayList<>(live.size());
        int order = 0;
        for (LiveInstance instance : live) {
            WorkSlot slot = slotByHolder.get(instance.ref());
            slot.unit = new Unit(instance, slot, instance.weight(), order++);
            liveUnits.add(slot.unit);
        }
        List<Unit> vacancies = new ArrayList<>();
        for (WorkSlot slot : slots) {
            if (slot.holder == null && (braked || now - slot.vacantSince < delayNanos)) {
                slot.unit = new Unit(null, slot, slot.weight, order++);
                vacancies.add(slot.unit);
            }
        }

        collectKept(liveUnits);
        var generalFree = new ArrayList<String>();
        var awaiting = new ArrayList<String>();
        classifyDesired(slots, departed, generalFree, awaiting);

        // split over every unit, let the vacancies take what they can, split the rest over the live
        int desired = module.desiredPids().size();
        List<Unit> units = new ArrayList<>(liveUnits);
        units.addAll(vacancies);
        split(desired, units);
        int reserved = reserve(vacancies, generalFree);
        split(desired - reserved, liveUnits);

        int moves = rebalance(liveUnits, braked, Math.min(moveBudget, policy.maxMovesPerModule()));
        fill(liveUnits, generalFree);

        if (live.isEmpty() && desired > 0) {
            signals.add(new PlanSignal.Unassignable(key, module.desiredPids()));
        }
        if (!awaiting.isEmpty()) {
            signals.add(new PlanSignal.AwaitingRelease(key, new HashSet<>(awaiting)));
        }
        for (Unit vacancy : vacancies) {
            signals.add(new PlanSignal.VacancyReserved(
                    key, vacancy.slot.index, vacancy.reservation.size(), vacancy.slot.vacantSince + delayNanos));
        }
        nextState = nextState(slots, recent);
        return moves;
    }

    private void planReleases(List<DepartedInstance> departed, Set<InstanceId> liveIds) {
        for (DepartedInstance instance : departed) {
            boolean graceOver = now - instance.departedAtNanos() >= graceNanos;
            if (graceOver || !mayHoldAny(instance)) {
                releases.add(new PlanStep.Release(key, instance.ref(), !liveIds.contains(instance.id())));
            }
        }
    }

    /** {@link DepartedInstance#mayHold} for any of its PIDs, without looking each one up. */
    private static boolean mayHoldAny(DepartedInstance instance) {
        for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
            if (node.getValue().mayHold() && !instance.released().contains(node.getKey())) {
                return true;
            }
        }
        return false;
    }

    /** The previous slots, with every slot whose holder is no longer live made vacant. */
    private List<WorkSlot> vacate(
            Map<InstanceRef, LiveInstance> liveByRef,
            Map<InstanceRef, DepartedInstance> departedByRef,
            Map<InstanceRef, Long> recent) {
        List<WorkSlot> slots = new ArrayList<>();
        previous.slots().forEach(s -> slots.add(new WorkSlot(s)));
        for (WorkSlot slot : slots) {
            if (slot.holder != null && !liveByRef.containsKey(slot.holder)) {
                DepartedInstance gone = departedByRef.get(slot.holder);
                slot.vacantSince = gone != null ? gone.departedAtNanos() : now;
                slot.lastHolder = slot.holder;
                slot.holder = null;
                if (gone != null && mayHoldAny(gone)) {
                    recent.putIfAbsent(slot.lastHolder, slot.vacantSince); // a failure, not a graceful leave
                }
            }
        }
        return slots;
    }

    /**
     * Live instances that hold PIDs but no slot (the memory was lost: a new leader) take slots
     * nobody held before, so they do not inherit a departed instance's share on top of their own.
     */
    private void bindHoldersToFreshSlots(List<LiveInstance> live, List<WorkSlot> slots) {
        var bound = holders(slots);
        var fresh = new FreshSlots(slots);
        for (LiveInstance instance : live) {
            if (!bound.contains(instance.ref())
                    && instance.pids().values().stream().anyMatch(PidState::mayHold)) {
                fresh.next().holder = instance.ref();
            }
        }
    }

    /** Departed instances no slot remembers (a new leader) vacate a fresh slot each. */
    private void attachUnknownDepartures(List<DepartedInstance> departed, List<WorkSlot> slots) {
        var known = new HashSet<InstanceRef>();
        for (WorkSlot slot : slots) {
            known.add(slot.holder);
            known.add(slot.lastHolder);
        }
        List<DepartedInstance> unknown = new ArrayList<>(
                departed.stream().filter(d -> !known.contains(d.ref())).toList());
        unknown.sort(Comparator.comparingLong(d -> d.departedAtNanos() - now));
        var fresh = new FreshSlots(slots);
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
    private void shrink(List<WorkSlot> slots, boolean braked) {
        int servers = module.config().servers();
        boolean operatorShrank = servers < previous.servers();
        index(slots);
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
    private void bindJoiners(
            List<LiveInstance> live,
            Map<InstanceRef, LiveInstance> liveByRef,
            Map<InstanceRef, DepartedInstance> departedByRef,
            List<WorkSlot> slots) {
        var bound = holders(slots);
        index(slots);
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
                WorkSlot slot = next < vacant.size() ? vacant.get(next++) : extra(slots);
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
        index(slots);
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

    private static Set<InstanceRef> holders(List<WorkSlot> slots) {
        var bound = new HashSet<InstanceRef>();
        slots.forEach(s -> bound.add(s.holder));
        return bound;
    }

    /** Hands out, in index order, slots nobody held and nothing is reserved for, then new extra slots. */
    private final class FreshSlots {
        private final List<WorkSlot> slots;
        private int next;

        FreshSlots(List<WorkSlot> slots) {
            this.slots = slots;
        }

        WorkSlot next() {
            while (next < slots.size()) {
                WorkSlot slot = slots.get(next++);
                if (slot.holder == null && slot.lastHolder == null && slot.previouslyReserved.isEmpty()) {
                    return slot;
                }
            }
            WorkSlot slot = extra(slots);
            next = slots.size();
            return slot;
        }
    }

    private WorkSlot extra(List<WorkSlot> slots) {
        var slot = new WorkSlot(now);
        slots.add(slot);
        return slot;
    }

    private static void index(List<WorkSlot> slots) {
        for (int i = 0; i < slots.size(); i++) {
            slots.get(i).index = i;
        }
    }

    /**
     * Counts the module's failures within the window: departures that may still hold a PID they did
     * not release, remembered from when first seen (a graceful leave released everything before its
     * node went, and does not count). A module of fewer than {@link PlannerPolicy#BRAKE_MIN_INSTANCES}
     * is never braked.
     */
    private boolean applyBrake(Map<InstanceRef, Long> recent, List<DepartedInstance> departed, int liveCount) {
        for (DepartedInstance d : departed) {
            if (mayHoldAny(d)) {
                recent.putIfAbsent(d.ref(), d.departedAtNanos());
            }
        }
        recent.values().removeIf(at -> now - at >= windowNanos);
        int vanished = recent.size();
        int instances = liveCount + vanished;
        boolean braked = vanished > 0
                && instances >= PlannerPolicy.BRAKE_MIN_INSTANCES
                && vanished > policy.brakeShare() * instances;
        if (braked) {
            signals.add(new PlanSignal.BrakeEngaged(key, vanished, instances));
        }
        return braked;
    }

    /** Sorts every PID node of the live instances into kept, or withdrawn as unwanted or duplicate. */
    private void collectKept(List<Unit> liveUnits) {
        for (Unit unit : liveUnits) {
            InstanceRef ref = unit.ref;
            int owner = index.liveOwner(unit.live);
            unit.keptAcked.ensureCapacity(index.nodeEnd(owner) - index.nodeStart(owner));
            for (int node = index.nodeStart(owner), end = index.nodeEnd(owner); node < end; node++) {
                PidState state = index.nodeState(node);
                if (state == PidState.DELETED || state == PidState.DELETING) {
                    continue;
                }
                int entry = index.nodeEntry(node);
                String pid = index.pid(entry);
                if (index.module(entry) != moduleIndex) {
                    deletes.add(new PlanStep.Delete(key, ref, pid, DeleteReason.UNWANTED));
                } else if (index.keeper(entry, moduleIndex) == owner) {
                    (state == PidState.ADDING ? unit.keptAdding : unit.keptAcked).add(pid);
                } else {
                    deletes.add(new PlanStep.Delete(key, ref, pid, DeleteReason.DUPLICATE));
                }
            }
        }
    }

    /**
     * Every desired PID nobody keeps is free (no claim anywhere) or in flight (someone may still
     * hold it); either is attributed to the slot it belongs to (its reservation, or the slot its
     * departed holder vacated) or goes to the general pool.
     */
    private void classifyDesired(
            List<WorkSlot> slots, List<DepartedInstance> departed, List<String> generalFree, List<String> awaiting) {
        int first = index.desiredStart(moduleIndex);
        int end = index.desiredEnd(moduleIndex);
        // by desired entry (offset from first), the slot the PID is attributed to; null until needed
        WorkSlot[] attributed = null;
        var slotByLastHolder = new HashMap<InstanceRef, WorkSlot>();
        for (WorkSlot slot : slots) {
            if (slot.unit == null) {
                continue;
            }
            for (String pid : slot.previouslyReserved) {
                attributed = attribute(attributed, pid, slot, first, end);
            }
            if (slot.lastHolder != null) {
                slotByLastHolder.put(slot.lastHolder, slot);
            }
        }
        for (DepartedInstance instance : departed) {
            WorkSlot slot = slotByLastHolder.get(instance.ref());
            if (slot != null) {
                for (Map.Entry<String, PidState> node : instance.pids().entrySet()) {
                    PidState state = node.getValue();
                    if (state != PidState.DELETING && state != PidState.DELETED) {
                        attributed = attribute(attributed, node.getKey(), slot, first, end);
                    }
                }
            }
        }
        for (int entry = first; entry < end; entry++) {
            boolean claimed = index.claimed(entry);
            if (claimed && index.keeper(entry, moduleIndex) != PidIndex.NONE) {
                continue;
            }
            String pid = index.pid(entry);
            WorkSlot slot = attributed == null ? null : attributed[entry - first];
            Unit unit = slot == null ? null : slot.unit;
            if (claimed) {
                awaiting.add(pid);
                if (unit != null) {
                    unit.attributedInFlight.add(pid);
                }
            } else {
                (unit != null ? unit.attributedFree : generalFree).add(pid);
            }
        }
    }

    /** Attributes {@code pid} to {@code slot} if it is one of this module's desired PIDs (the last attribution wins). */
    private WorkSlot[] attribute(WorkSlot[] attributed, String pid, WorkSlot slot, int first, int end) {
        int entry = index.find(pid);
        if (entry < first || entry >= end) {
            return attributed;
        }
        WorkSlot[] result = attributed == null ? new WorkSlot[end - first] : attributed;
        result[entry - first] = slot;
        return result;
    }

    /** Largest-remainder split of {@code total} over {@code units} by weight; sets each target. */
    private static void split(long total, List<Unit> units) {
        if (units.isEmpty()) {
            return;
        }
        long weights = 0;
        for (Unit unit : units) {
            weights += unit.weight;
        }
        long given = 0;
        for (Unit unit : units) {
            long share = total * unit.weight;
            unit.floor = (int) (share / weights);
            unit.remainder = share % weights;
            unit.target = unit.floor;
            given += unit.floor;
        }
        int extra = (int) (total - given);
        if (extra > 0) {
            Unit[] byRounding = units.toArray(new Unit[0]);
            Arrays.sort(byRounding, ROUNDING_ORDER);
            for (int i = 0; i < extra; i++) {
                byRounding[i].target++;
            }
        }
    }

    /**
     * Vacant slots keep their own PIDs up to their target, then top up from the free pool. They
     * never take a PID from a live instance. Returns how many PIDs the vacancies hold back.
     */
    private static int reserve(List<Unit> vacancies, List<String> generalFree) {
        for (Unit vacancy : vacancies) {
            var reservation = new ArrayList<String>(vacancy.target);
            for (String pid : vacancy.attributedInFlight) {
                if (reservation.size() < vacancy.target) {
                    reservation.add(pid);
                }
            }
            for (String pid : vacancy.attributedFree) {
                if (reservation.size() < vacancy.target) {
                    reservation.add(pid);
                } else {
                    generalFree.add(pid);
                }
            }
            vacancy.reservation = reservation;
        }
        int reserved = 0;
        for (Unit vacancy : vacancies) {
            while (vacancy.reservation.size() < vacancy.target && !generalFree.isEmpty()) {
                vacancy.reservation.add(generalFree.remove(generalFree.size() - 1));
            }
            reserved += vacancy.reservation.size();
        }
        return reserved;
    }

    /** Withdraws the surplus of live units above target, within the throttle, unless braked. */
    private int rebalance(List<Unit> liveUnits, boolean braked, int budget) {
        List<Unit> givers = new ArrayList<>();
        int surplus = 0;
        for (Unit unit : liveUnits) {
            int over = unit.kept() - unit.target;
            if (over > 0) {
                givers.add(unit);
                surplus += over;
            }
        }
        if (surplus == 0 || braked) {
            return 0;
        }
        var give = new HashMap<Unit, Integer>();
        if (surplus <= budget) {
            givers.forEach(u -> give.put(u, u.kept() - u.target));
        } else {
            // round robin from the fullest, so the throttle trims every giver alike
            givers.sort(Comparator.<Unit>comparingInt(u -> u.target - u.kept()).thenComparingInt(u -> u.tieOrder));
            int left = budget;
            while (left > 0) {
                for (Unit unit : givers) {
                    int given = give.getOrDefault(unit, 0);
                    if (left > 0 && given < unit.kept() - unit.target) {
                        give.put(unit, given + 1);
                        left--;
                    }
                }
            }
            signals.add(new PlanSignal.Throttled(key, surplus - budget));
        }
        int moves = 0;
        for (Unit unit : givers) {
            int count = give.getOrDefault(unit, 0);
            for (int i = 0; i < count; i++) {
                deletes.add(new PlanStep.Delete(key, unit.ref, unit.takeForDelete(), DeleteReason.REBALANCE));
            }
            moves += count;
        }
        return moves;
    }

    /**
     * Live units below target take their own attributed free PIDs, count their attributed PIDs in
     * flight as coming, then take from the free pool. Surplus attributions return to the pool.
     */
    private void fill(List<Unit> liveUnits, List<String> generalFree) {
        for (Unit unit : liveUnits) {
            int need = unit.target - unit.kept();
            int take = Math.max(0, Math.min(need, unit.attributedFree.size()));
            unit.givenBack = unit.attributedFree.subList(0, take);
            for (int i = 0; i < unit.attributedFree.size(); i++) {
                if (i < take) {
                    adds.add(new PlanStep.Add(key, unit.ref, unit.attributedFree.get(i)));
                } else {
                    generalFree.add(unit.attributedFree.get(i));
                }
            }
            need -= take;
            int expect = Math.max(0, Math.min(need, unit.attributedInFlight.size()));
            unit.waitingFor = unit.attributedInFlight.subList(0, expect);
            unit.need = need - expect;
        }
        for (Unit unit : liveUnits) {
            for (; unit.need > 0 && !generalFree.isEmpty(); unit.need--) {
                adds.add(new PlanStep.Add(key, unit.ref, generalFree.remove(generalFree.size() - 1)));
            }
        }
    }

    private ModuleState nextState(List<WorkSlot> slots, Map<InstanceRef, Long> recent) {
        List<SlotState> next = new ArrayList<>(slots.size());
        for (WorkSlot slot : slots) {
            Set<String> reserved;
            if (slot.unit == null) {
                reserved = Set.of();
            } else {
                reserved = new LinkedHashSet<>(slot.unit.live != null ? slot.unit.waitingFor : slot.unit.reservation);
                if (slot.unit.live != null) {
                    // an add the leader has not written yet (it waits for a departed holder's nodes to go)
                    // must not lose its slot: the next plan, without those nodes, would pool the PID
                    reserved.addAll(slot.unit.givenBack);
                }
            }
            next.add(new SlotState(slot.holder, slot.lastHolder, slot.vacantSince, slot.weight, reserved));
        }
        return new ModuleState(module.config().servers(), next, recent);
    }
}
