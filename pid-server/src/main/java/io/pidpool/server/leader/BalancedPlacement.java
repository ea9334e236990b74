package io.pidpool.server.leader;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A stand-in {@link PlacementPolicy} until the core allocation planner is wired in: exclusivity across
 * modules (grace for departed instances), balance by weight with largest remainders going to the
 * instances that already hold more (so a join moves the minimum), unwanted and duplicate holds
 * revoked. No slots, no rebalance delay, no throttle, no brake: those are the planner's.
 *
 * <p>Concurrency: stateless; safe to share.
 */
public final class BalancedPlacement implements PlacementPolicy {
    private final long graceNanos;

    public BalancedPlacement(Duration grace) {
        this.graceNanos = grace.toNanos();
    }

    @Override
    public Placement plan(List<ModuleInput> modules, long nowNanos) {
        // who may hold what, across modules
        Set<String> taken = new HashSet<>();
        for (ModuleInput module : modules) {
            for (LiveInput live : module.live()) {
                live.pids().forEach((pid, state) -> {
                    if (state.mayHold()) {
                        taken.add(pid);
                    }
                });
            }
            for (DepartedInput gone : module.departed()) {
                if (nowNanos - gone.departedAtNanos() < graceNanos) {
                    gone.pids().forEach((pid, state) -> {
                        if (state.mayHold() && !gone.released().contains(pid)) {
                            taken.add(pid);
                        }
                    });
                }
            }
        }
        List<Step> revokes = new ArrayList<>();
        List<Step> releases = new ArrayList<>();
        List<Step> adds = new ArrayList<>();
        List<Signal> signals = new ArrayList<>();
        for (ModuleInput module : modules) {
            planModule(module, taken, nowNanos, revokes, releases, adds, signals);
        }
        List<Step> steps = new ArrayList<>(revokes);
        steps.addAll(releases);
        steps.addAll(adds);
        return new Placement(steps, signals);
    }

    private void planModule(
            ModuleInput module,
            Set<String> taken,
            long now,
            List<Step> revokes,
            List<Step> releases,
            List<Step> adds,
            List<Signal> signals) {
        ModuleKey key = module.key();
        for (DepartedInput gone : module.departed()) {
            boolean allReleased = gone.pids().entrySet().stream()
                    .allMatch(e -> !e.getValue().mayHold() || gone.released().contains(e.getKey()));
            if (allReleased || now - gone.departedAtNanos() >= graceNanos) {
                releases.add(new Release(key, gone.id(), gone.sessionId(), true));
            }
        }
        List<LiveInput> live = new ArrayList<>(module.live());
        live.sort(Comparator.comparingLong(LiveInput::registrationOrder).thenComparing(LiveInput::id));
        Map<InstanceId, List<String>> kept = new LinkedHashMap<>();
        Set<String> keptAnywhere = new HashSet<>();
        for (LiveInput instance : live) {
            List<String> mine = new ArrayList<>();
            for (var e : new java.util.TreeMap<>(instance.pids()).entrySet()) {
                String pid = e.getKey();
                PidState state = e.getValue();
                if (!state.mayHold() || state == PidState.DELETING) {
                    continue;
                }
                if (!module.desired().contains(pid) || !keptAnywhere.add(pid)) {
                    revokes.add(new Revoke(key, instance.id(), instance.sessionId(), pid, false));
                } else {
                    mine.add(pid);
                }
            }
            kept.put(instance.id(), mine);
        }
        if (live.isEmpty()) {
            if (!module.desired().isEmpty()) {
                signals.add(Signal.alert(
                        "unassignable:" + key,
                        key + ": " + module.desired().size() + " PIDs wait for a live instance"));
            }
            return;
        }
        Map<InstanceId, Integer> targets = targets(module.desired().size(), live, kept);
        Map<InstanceId, Integer> deficits = new HashMap<>();
        for (LiveInput instance : live) {
            List<String> mine = kept.get(instance.id());
            int target = targets.get(instance.id());
            for (int i = mine.size() - 1; i >= target; i--) {
                revokes.add(new Revoke(key, instance.id(), instance.sessionId(), mine.get(i), true));
            }
            deficits.put(instance.id(), Math.max(0, target - mine.size()));
        }
        int waiting = 0;
        var free = new TreeSet<String>();
        for (String pid : module.desired()) {
            if (!keptAnywhere.contains(pid)) {
                if (taken.contains(pid)) {
                    waiting++;
                } else {
                    free.add(pid);
                }
            }
        }
        for (LiveInput instance : live) {
            int deficit = deficits.get(instance.id());
            while (deficit-- > 0 && !free.isEmpty()) {
                String pid = free.pollFirst();
                taken.add(pid);
                adds.add(new Add(key, instance.id(), instance.sessionId(), pid));
            }
        }
        if (waiting > 0) {
            signals.add(Signal.info(key + ": " + waiting + " PIDs await release by their previous holder"));
        }
    }

    /** Targets proportional to weight; remainders go to those that already hold more (fewest moves). */
    private static Map<InstanceId, Integer> targets(
            int total, List<LiveInput> live, Map<InstanceId, List<String>> kept) {
        long weights = live.stream().mapToLong(LiveInput::weight).sum();
        Map<InstanceId, Integer> targets = new HashMap<>();
        int assigned = 0;
        List<LiveInput> byRemainder = new ArrayList<>(live);
        Map<InstanceId, Long> remainders = new HashMap<>();
        for (LiveInput instance : live) {
            long share = (long) total * instance.weight();
            targets.put(instance.id(), (int) (share / weights));
            remainders.put(instance.id(), share % weights);
            assigned += (int) (share / weights);
        }
        byRemainder.sort(Comparator.<LiveInput>comparingLong(i -> -remainders.get(i.id()))
                .thenComparing(i -> -kept.get(i.id()).size())
                .thenComparingLong(LiveInput::registrationOrder));
        for (int i = 0; assigned < total; i++, assigned++) {
            InstanceId id = byRemainder.get(i % byRemainder.size()).id();
            targets.merge(id, 1, Integer::sum);
        }
        return targets;
    }
}
