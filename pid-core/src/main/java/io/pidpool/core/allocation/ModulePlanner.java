package io.pidpool.core.allocation;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
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
 *
 * <p>Its parts: {@link SlotBinder} decides which slot each live instance sits in and which stay
 * vacant; {@link BalanceUnit} is one unit of the balance and its largest-remainder split; this
 * class sorts the module's PIDs over the units and writes the steps.
 */
final class ModulePlanner {
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
        var binder = new SlotBinder(previous, module.config().servers(), now, delayNanos);
        binder.vacate(liveByRef, departedByRef, recent);
        binder.bindHoldersToFreshSlots(live);
        binder.attachUnknownDepartures(departed);
        boolean braked = applyBrake(recent, departed, live.size());
        binder.shrink(braked);
        binder.bindJoiners(live, liveByRef, departedByRef);
        List<WorkSlot> slots = binder.slots();

        // the units of the balance
        var slotByHolder = new HashMap<InstanceRef, WorkSlot>();
        slots.stream().filter(s -> s.holder != null).forEach(s -> slotByHolder.put(s.holder, s));
        List<BalanceUnit> liveUnits = new ArrayList<>(live.size());
        int order = 0;
        for (LiveInstance instance : live) {
            WorkSlot slot = slotByHolder.get(instance.ref());
            slot.unit = new BalanceUnit(instance, slot, instance.weight(), order++);
            liveUnits.add(slot.unit);
        }
        List<BalanceUnit> vacancies = new ArrayList<>();
        for (WorkSlot slot : slots) {
            if (slot.holder == null && (braked || now - slot.vacantSince < delayNanos)) {
                slot.unit = new BalanceUnit(null, slot, slot.weight, order++);
                vacancies.add(slot.unit);
            }
        }

        collectKept(liveUnits);
        var generalFree = new ArrayList<String>();
        var awaiting = new ArrayList<String>();
        classifyDesired(slots, departed, generalFree, awaiting);

        // split over every unit, let the vacancies take what they can, split the rest over the live
        int desired = module.desiredPids().size();
        List<BalanceUnit> units = new ArrayList<>(liveUnits);
        units.addAll(vacancies);
        BalanceUnit.split(desired, units);
        int reserved = reserve(vacancies, generalFree);
        BalanceUnit.split(desired - reserved, liveUnits);

        int moves = rebalance(liveUnits, braked, Math.min(moveBudget, policy.maxMovesPerModule()));
        fill(liveUnits, generalFree);

        if (live.isEmpty() && desired > 0) {
            signals.add(new PlanSignal.Unassignable(key, module.desiredPids()));
        }
        if (!awaiting.isEmpty()) {
            signals.add(new PlanSignal.AwaitingRelease(key, new HashSet<>(awaiting)));
        }
        for (BalanceUnit vacancy : vacancies) {
            signals.add(new PlanSignal.VacancyReserved(
                    key, vacancy.slot.index, vacancy.reservation.size(), vacancy.slot.vacantSince + delayNanos));
        }
        nextState = nextState(slots, recent);
        return moves;
    }

    private void planReleases(List<DepartedInstance> departed, Set<InstanceId> liveIds) {
        for (DepartedInstance instance : departed) {
            boolean graceOver = now - instance.departedAtNanos() >= graceNanos;
            if (graceOver || !instance.mayHoldAny()) {
                releases.add(new PlanStep.Release(key, instance.ref(), !liveIds.contains(instance.id())));
            }
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
            if (d.mayHoldAny()) {
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
    private void collectKept(List<BalanceUnit> liveUnits) {
        for (BalanceUnit unit : liveUnits) {
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
            BalanceUnit unit = slot == null ? null : slot.unit;
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

    /**
     * Vacant slots keep their own PIDs up to their target, then top up from the free pool. They
     * never take a PID from a live instance. Returns how many PIDs the vacancies hold back.
     */
    private static int reserve(List<BalanceUnit> vacancies, List<String> generalFree) {
        for (BalanceUnit vacancy : vacancies) {
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
        for (BalanceUnit vacancy : vacancies) {
            while (vacancy.reservation.size() < vacancy.target && !generalFree.isEmpty()) {
                vacancy.reservation.add(generalFree.remove(generalFree.size() - 1));
            }
            reserved += vacancy.reservation.size();
        }
        return reserved;
    }

    /** Withdraws the surplus of live units above target, within the throttle, unless braked. */
    private int rebalance(List<BalanceUnit> liveUnits, boolean braked, int budget) {
        List<BalanceUnit> givers = new ArrayList<>();
        int surplus = 0;
        for (BalanceUnit unit : liveUnits) {
            int over = unit.kept() - unit.target;
            if (over > 0) {
                givers.add(unit);
                surplus += over;
            }
        }
        if (surplus == 0 || braked) {
            return 0;
        }
        var give = new HashMap<BalanceUnit, Integer>();
        if (surplus <= budget) {
            givers.forEach(u -> give.put(u, u.kept() - u.target));
        } else {
            // round robin from the fullest, so the throttle trims every giver alike
            givers.sort(Comparator.<BalanceUnit>comparingInt(u -> u.target - u.kept())
                    .thenComparingInt(u -> u.tieOrder));
            int left = budget;
            while (left > 0) {
                for (BalanceUnit unit : givers) {
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
        for (BalanceUnit unit : givers) {
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
    private void fill(List<BalanceUnit> liveUnits, List<String> generalFree) {
        for (BalanceUnit unit : liveUnits) {
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
        for (BalanceUnit unit : liveUnits) {
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
