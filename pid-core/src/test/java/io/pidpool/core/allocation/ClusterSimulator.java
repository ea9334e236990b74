package io.pidpool.core.allocation;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * A deterministic model of the cluster around the planner: modules, instances with their PID nodes,
 * departed instances, the database's desired PIDs and a monotonic clock. {@link #step()} plans,
 * applies the plan the way the leader would (and fails on any instruction the leader could not
 * legally write), and checks that no PID is ever held twice. Events (join, crash, graceful leave,
 * acks, time) are applied by the test.
 *
 * <p>Not thread-safe: one test drives it.
 */
final class ClusterSimulator {
    /** An instance whose ephemeral node exists. */
    static final class Instance {
        final ModuleKey module;
        final InstanceRef ref;
        final long order;
        final int weight;
        /** The instance the same process registered as before (a returning client); null: none. */
        final InstanceId previous;

        final LinkedHashMap<String, PidState> nodes = new LinkedHashMap<>();

        Instance(ModuleKey module, InstanceRef ref, long order, int weight) {
            this(module, ref, order, weight, null);
        }

        Instance(ModuleKey module, InstanceRef ref, long order, int weight, InstanceId previous) {
            this.module = module;
            this.ref = ref;
            this.order = order;
            this.weight = weight;
            this.previous = previous;
        }

        /** PIDs the instance holds with an acknowledged ADDED/UPDATED node. */
        Set<String> held() {
            var held = new LinkedHashSet<String>();
            nodes.forEach((pid, state) -> {
                if (state == PidState.ADDED || state == PidState.UPDATED) {
                    held.add(pid);
                }
            });
            return held;
        }
    }

    /** An instance whose ephemeral node vanished and whose bookkeeping the leader still keeps. */
    record Departed(ModuleKey module, InstanceRef ref, long at, Map<String, PidState> nodes, Set<String> released) {}

    final AllocationPlanner planner;
    final PlannerPolicy policy;
    final long graceNanos;
    long now = 1_000_000_000_000L;
    PlannerState state = PlannerState.EMPTY;
    final Map<ModuleKey, Integer> servers = new TreeMap<>();
    /** Modules' own rebalance delays (ModuleConfig.rebalanceDelay); absent: the policy's. */
    final Map<ModuleKey, Duration> delays = new TreeMap<>();

    final Map<ModuleKey, LinkedHashSet<String>> desired = new TreeMap<>();
    final List<Instance> live = new ArrayList<>();
    final List<Departed> departed = new ArrayList<>();
    /** PID → the time its cooldown ends (the leader's bookkeeping; passed to every module). */
    final Map<String, Long> cooldowns = new HashMap<>();

    final Map<DeleteReason, Integer> deletesByReason = new EnumMap<>(DeleteReason.class);
    int addsApplied;
    int plans;
    Plan lastPlan;
    /** Called with every snapshot and state just before {@link #step()} plans them (e.g. to compare planners). */
    BiConsumer<ClusterSnapshot, PlannerState> beforePlan = (snapshot, state) -> {};

    private long nextSession = 0x100;
    private long nextOrder = 1;
    private int nextInstance = 1;
    private int nextPid = 1;

    ClusterSimulator(PlannerPolicy policy) {
        this.planner = new AllocationPlanner(policy);
        this.policy = policy;
        this.graceNanos = policy.grace().toNanos();
    }

    // ---------------------------------------------------------------- events

    ModuleKey module(String name, int serverCount) {
        ModuleKey key = ModuleKey.parse("d#" + name + "#s");
        servers.put(key, serverCount);
        desired.put(key, new LinkedHashSet<>());
        return key;
    }

    List<String> addPids(ModuleKey module, int count) {
        List<String> added = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String pid = "p" + nextPid++;
            desired.get(module).add(pid);
            added.add(pid);
        }
        return added;
    }

    void removePid(String pid) {
        desired.values().forEach(set -> set.remove(pid));
    }

    void migrate(String pid, ModuleKey to) {
        removePid(pid);
        desired.get(to).add(pid);
    }

    void setServers(ModuleKey module, int count) {
        servers.put(module, count);
    }

    InstanceRef join(ModuleKey module) {
        return join(module, 1);
    }

    InstanceRef join(ModuleKey module, int weight) {
        var ref = new InstanceRef(InstanceId.of("i" + nextInstance++), nextSession++);
        live.add(new Instance(module, ref, nextOrder++, weight));
        return ref;
    }

    /** A process whose session was lost registers again, naming the instance it was. */
    InstanceRef rejoin(ModuleKey module, InstanceRef was) {
        var ref = new InstanceRef(InstanceId.of("i" + nextInstance++), nextSession++);
        live.add(new Instance(module, ref, nextOrder++, 1, was.id()));
        return ref;
    }

    /** The process dies: its ephemeral node vanishes now, its nodes stay as they were. */
    void crash(InstanceRef ref) {
        Instance gone = instance(ref);
        live.remove(gone);
        departed.add(new Departed(gone.module, ref, now, new LinkedHashMap<>(gone.nodes), Set.of()));
    }

    /** A graceful close: the SDK revokes everything (logs out), marks it released, then leaves. */
    void leave(InstanceRef ref) {
        Instance gone = instance(ref);
        live.remove(gone);
        departed.add(new Departed(
                gone.module, ref, now, new LinkedHashMap<>(gone.nodes), new LinkedHashSet<>(gone.nodes.keySet())));
    }

    /** A login failure or conflict was reported for {@code pid}: it cools down for {@code period} from now. */
    void coolDown(String pid, Duration period) {
        cooldowns.put(pid, now + period.toNanos());
    }

    void advance(Duration by) {
        now += by.toNanos();
    }

    /** Every live instance answers every pending instruction; the leader removes DELETED nodes. */
    void ackAll() {
        for (Instance instance : live) {
            instance.nodes.replaceAll((pid, state) -> state.isInstruction() ? state.ack() : state);
            instance.nodes.values().removeIf(state -> state == PidState.DELETED);
        }
    }

    /** Every {@code stride}-th pending instruction is answered, starting at {@code offset}; DELETED nodes stay. */
    void ackSome(int offset, int stride) {
        int i = 0;
        for (Instance instance : live) {
            for (Map.Entry<String, PidState> node : instance.nodes.entrySet()) {
                if (node.getValue().isInstruction() && (i++ + offset) % stride == 0) {
                    node.setValue(node.getValue().ack());
                }
            }
        }
    }

    boolean hasPendingInstructions() {
        return live.stream().anyMatch(i -> i.nodes.values().stream().anyMatch(PidState::isInstruction));
    }

    // ---------------------------------------------------------------- the leader

    ClusterSnapshot snapshot() {
        List<ModuleSnapshot> modules = new ArrayList<>();
        for (ModuleKey key : servers.keySet()) {
            List<LiveInstance> liveOnes = live.stream()
                    .filter(i -> i.module.equals(key))
                    .map(i -> new LiveInstance(i.ref.id(), i.ref.sessionId(), i.weight, i.order, i.nodes, i.previous))
                    .toList();
            List<DepartedInstance> departedOnes = departed.stream()
                    .filter(d -> d.module.equals(key))
                    .map(d -> new DepartedInstance(d.ref.id(), d.ref.sessionId(), d.at, d.nodes, d.released))
                    .toList();
            modules.add(new ModuleSnapshot(
                    ModuleConfig.of(key, servers.get(key)).withRebalanceDelay(delays.get(key)),
                    desired.get(key),
                    liveOnes,
                    departedOnes,
                    cooldowns));
        }
        return new ClusterSnapshot(modules);
    }

    /** Plans at the current time, checks the plan's shape, applies it, keeps its state, checks exclusivity. */
    Plan step() {
        ClusterSnapshot snapshot = snapshot();
        beforePlan.accept(snapshot, state);
        Plan plan = planner.plan(snapshot, state, now);
        assertWellFormed(plan);
        apply(plan);
        state = plan.nextState();
        lastPlan = plan;
        plans++;
        assertExclusive();
        return plan;
    }

    /**
     * Acks, lets every delay pass and plans until the cluster is at rest: a plan with nothing to do,
     * no pending instruction, no PID awaiting a release, no brake, no throttle, and no vacancy
     * keeping PIDs back in a module that has live instances. Fails after {@code maxRounds} plans.
     */
    void quiesce(Duration longestDelay, int maxRounds) {
        for (int round = 0; round < maxRounds; round++) {
            ackAll();
            advance(longestDelay.plusNanos(1));
            Plan plan = step();
            if (plan.isEmpty() && !hasPendingInstructions() && atRest(plan)) {
                return;
            }
        }
        throw new AssertionError("the cluster did not quiesce within " + maxRounds + " plans; last plan: "
                + lastPlan.steps() + " " + lastPlan.signals());
    }

    private boolean atRest(Plan plan) {
        for (PlanSignal signal : plan.signals()) {
            if (signal instanceof PlanSignal.VacancyReserved reserved) {
                if (reserved.reservedPids() > 0 && !liveIn(reserved.module()).isEmpty()) {
                    return false;
                }
            } else if (!(signal instanceof PlanSignal.Unassignable)) {
                return false;
            }
        }
        return true;
    }

    /** Deletes, then releases, then adds; moves within the throttle; no moves where the brake is on. */
    void assertWellFormed(Plan plan) {
        int phase = 0;
        for (PlanStep step : plan.steps()) {
            int stepPhase = step instanceof PlanStep.Delete ? 0 : step instanceof PlanStep.Release ? 1 : 2;
            if (stepPhase < phase) {
                throw new AssertionError("steps out of order: " + plan.steps());
            }
            phase = stepPhase;
        }
        var movesByModule = new HashMap<ModuleKey, Integer>();
        plan.deletes().stream()
                .filter(d -> d.reason().isMove())
                .forEach(d -> movesByModule.merge(d.module(), 1, Integer::sum));
        int total = movesByModule.values().stream().mapToInt(Integer::intValue).sum();
        if (total > policy.maxMovesPerPlan()
                || movesByModule.values().stream().anyMatch(m -> m > policy.maxMovesPerModule())) {
            throw new AssertionError("throttle exceeded: " + movesByModule);
        }
        for (PlanSignal.BrakeEngaged brake : plan.signals(PlanSignal.BrakeEngaged.class)) {
            if (movesByModule.containsKey(brake.module())) {
                throw new AssertionError("moves in braked module " + brake.module() + ": " + plan.deletes());
            }
        }
    }

    /** When set, the next plan's adds are not applied (a leader that deferred them), then it clears. */
    boolean dropAddsOnce;

    void apply(Plan plan) {
        boolean dropAdds = dropAddsOnce;
        dropAddsOnce = false;
        for (PlanStep step : plan.steps()) {
            if (dropAdds && step instanceof PlanStep.Add) {
                continue;
            }
            if (step instanceof PlanStep.Delete delete) {
                Instance target = liveInstance(delete.instance(), delete);
                PidState current = target.nodes.get(delete.pid());
                if (current == null || !current.mayHold() || current == PidState.DELETING) {
                    throw new AssertionError(
                            "delete of a PID the instance does not hold: " + delete + " (node state " + current + ")");
                }
                target.nodes.put(delete.pid(), PidState.DELETING.assertCanFollow(current));
                deletesByReason.merge(delete.reason(), 1, Integer::sum);
            } else if (step instanceof PlanStep.Release release) {
                Departed gone = departed.stream()
                        .filter(d -> d.ref.equals(release.instance()))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("release of an unknown instance: " + release));
                boolean mayStillHold = gone.nodes.entrySet().stream()
                        .anyMatch(n -> n.getValue().mayHold() && !gone.released.contains(n.getKey()));
                if (now - gone.at < graceNanos && mayStillHold) {
                    throw new AssertionError("release within the grace period: " + release);
                }
                departed.remove(gone);
            } else if (step instanceof PlanStep.Add add) {
                Instance target = liveInstance(add.instance(), add);
                List<String> holders = holders(add.pid());
                if (!holders.isEmpty()) {
                    throw new AssertionError("exclusivity: " + add + " while held by " + holders);
                }
                if (!desired.get(add.module()).contains(add.pid())) {
                    throw new AssertionError("add of a PID the module does not want: " + add);
                }
                target.nodes.remove(add.pid()); // a DELETED node is replaced
                target.nodes.put(add.pid(), PidState.ADDING.assertCanFollow(null));
                addsApplied++;
            }
        }
    }

    /** Who may hold {@code pid} now: live nodes in any state but DELETED, departed ones within grace. */
    List<String> holders(String pid) {
        List<String> holders = new ArrayList<>();
        for (Instance instance : live) {
            PidState state = instance.nodes.get(pid);
            if (state != null && state.mayHold()) {
                holders.add(instance.ref + "=" + state);
            }
        }
        for (Departed gone : departed) {
            PidState state = gone.nodes.get(pid);
            if (state != null && state.mayHold() && !gone.released.contains(pid) && now - gone.at < graceNanos) {
                holders.add(gone.ref + "(departed)=" + state);
            }
        }
        return holders;
    }

    void assertExclusive() {
        var seen = new HashMap<String, String>();
        for (Instance instance : live) {
            instance.nodes.forEach((pid, state) -> {
                if (state.mayHold()) {
                    claim(seen, pid, instance.ref.toString());
                }
            });
        }
        for (Departed gone : departed) {
            if (now - gone.at < graceNanos) {
                gone.nodes.forEach((pid, state) -> {
                    if (state.mayHold() && !gone.released.contains(pid)) {
                        claim(seen, pid, gone.ref + "(departed)");
                    }
                });
            }
        }
    }

    private static void claim(Map<String, String> seen, String pid, String who) {
        String other = seen.putIfAbsent(pid, who);
        if (other != null) {
            throw new AssertionError("exclusivity: " + pid + " may be held by " + other + " and " + who);
        }
    }

    /**
     * After {@link #quiesce}: in every module with a live instance, every desired PID is held
     * (ADDED) by exactly one live instance of the module, nothing else is held, and the counts are
     * the largest-remainder split by weight.
     */
    void assertBalancedAndComplete() {
        for (ModuleKey key : servers.keySet()) {
            List<Instance> members = liveIn(key);
            Set<String> wanted = desired.get(key);
            if (members.isEmpty()) {
                continue;
            }
            var heldBy = new HashMap<String, InstanceRef>();
            long weights = members.stream().mapToLong(i -> i.weight).sum();
            for (Instance instance : members) {
                if (instance.nodes.size() != instance.held().size()) {
                    throw new AssertionError(
                            "pending nodes after quiescence at " + instance.ref + ": " + instance.nodes);
                }
                for (String pid : instance.held()) {
                    if (!wanted.contains(pid)) {
                        throw new AssertionError(instance.ref + " holds unwanted " + pid);
                    }
                    if (heldBy.put(pid, instance.ref) != null) {
                        throw new AssertionError(pid + " held twice in " + key);
                    }
                }
                long share = (long) wanted.size() * instance.weight;
                long floor = share / weights;
                long ceil = floor + (share % weights == 0 ? 0 : 1);
                int count = instance.held().size();
                if (count < floor || count > ceil) {
                    throw new AssertionError("unbalanced " + key + ": " + instance.ref + " (weight " + instance.weight
                            + ") holds " + count + ", expected " + floor + ".." + ceil + "; counts " + counts(key));
                }
            }
            if (heldBy.size() != wanted.size()) {
                var missing = new LinkedHashSet<>(wanted);
                missing.removeAll(heldBy.keySet());
                throw new AssertionError("not every desired PID of " + key + " is held; missing " + missing);
            }
        }
    }

    Map<InstanceRef, Integer> counts(ModuleKey key) {
        var counts = new LinkedHashMap<InstanceRef, Integer>();
        liveIn(key).forEach(i -> counts.put(i.ref, i.held().size()));
        return counts;
    }

    List<Instance> liveIn(ModuleKey key) {
        return live.stream().filter(i -> i.module.equals(key)).toList();
    }

    Instance instance(InstanceRef ref) {
        return live.stream()
                .filter(i -> i.ref.equals(ref))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no live instance " + ref));
    }

    private Instance liveInstance(InstanceRef ref, PlanStep step) {
        return live.stream()
                .filter(i -> i.ref.equals(ref))
                .findFirst()
                .orElseThrow(() -> new AssertionError("instruction for an instance that is not live: " + step));
    }

    int moves() {
        return deletesByReason.getOrDefault(DeleteReason.REBALANCE, 0);
    }

    static Set<String> union(Collection<Set<String>> sets) {
        var all = new HashSet<String>();
        sets.forEach(all::addAll);
        return all;
    }
}
