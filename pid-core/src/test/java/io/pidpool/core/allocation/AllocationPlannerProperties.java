package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * Random histories of joins, crashes, graceful leaves, server-count changes, PID additions,
 * removals and migrations, partial and full acks, time steps and leader failovers, played against
 * {@link ClusterSimulator}. The simulator fails on any instruction the leader could not write and
 * on any PID that two instances (counting departed ones within the grace period) may hold at once.
 * jqwik shrinks a failing history and prints the seed to replay it.
 */
class AllocationPlannerProperties {
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Duration DELAY = Duration.ofSeconds(30);
    private static final Duration WINDOW = Duration.ofSeconds(20);
    private static final Duration LONGEST = Duration.ofSeconds(31);
    private static final int MAX_LIVE_PER_MODULE = 7;
    private static final int MAX_PIDS = 90;

    enum Kind {
        JOIN,
        CRASH,
        LEAVE,
        SERVERS,
        ADD_PIDS,
        REMOVE_PIDS,
        MIGRATE,
        ACK_ALL,
        ACK_SOME,
        TICK_SMALL,
        TICK_GRACE,
        TICK_LONG,
        PLAN,
        FAILOVER
    }

    /** One event; {@code a} and {@code b} pick the module, the instance, the amount. */
    record Action(Kind kind, int a, int b) {}

    /** A single change applied to a settled module. */
    record Change(Kind kind, int pick) {}

    @Provide
    Arbitrary<List<Action>> histories() {
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                Tuple.of(6, Kind.JOIN),
                Tuple.of(3, Kind.CRASH),
                Tuple.of(2, Kind.LEAVE),
                Tuple.of(2, Kind.SERVERS),
                Tuple.of(4, Kind.ADD_PIDS),
                Tuple.of(2, Kind.REMOVE_PIDS),
                Tuple.of(2, Kind.MIGRATE),
                Tuple.of(4, Kind.ACK_ALL),
                Tuple.of(3, Kind.ACK_SOME),
                Tuple.of(3, Kind.TICK_SMALL),
                Tuple.of(3, Kind.TICK_GRACE),
                Tuple.of(2, Kind.TICK_LONG),
                Tuple.of(4, Kind.PLAN),
                Tuple.of(1, Kind.FAILOVER));
        Arbitrary<Integer> picks = Arbitraries.integers().between(0, 999);
        return Combinators.combine(kinds, picks, picks)
                .as(Action::new)
                .list()
                .ofMinSize(1)
                .ofMaxSize(40);
    }

    @Provide
    Arbitrary<Change> changes() {
        return Combinators.combine(
                        Arbitraries.of(Kind.JOIN, Kind.CRASH, Kind.LEAVE, Kind.SERVERS),
                        Arbitraries.integers().between(0, 999))
                .as(Change::new);
    }

    @Property(tries = 1000)
    void everyHistoryKeepsPidsExclusiveAndSettlesBalancedAndComplete(
            @ForAll("histories") List<Action> history,
            @ForAll @IntRange(min = 1, max = 5) int servers,
            @ForAll @IntRange(min = 0, max = 40) int initialPids,
            @ForAll boolean weighted,
            @ForAll boolean throttled) {
        var sim = new ClusterSimulator(policy(throttled));
        List<ModuleKey> modules = List.of(sim.module("a", servers), sim.module("b", 2));
        sim.addPids(modules.get(0), initialPids);
        sim.addPids(modules.get(1), initialPids / 2);

        for (Action action : history) {
            play(sim, modules, action, weighted);
            sim.assertExclusive();
        }

        sim.quiesce(LONGEST, 100);
        sim.assertBalancedAndComplete();
        sim.ackAll();
        Plan again = sim.planner.plan(sim.snapshot(), sim.state, sim.now);
        assertThat(again.steps()).as("planning on an acknowledged plan").isEmpty();
    }

    @Property(tries = 1000)
    void aSingleChangeFromABalancedStateMovesTheTheoreticalMinimum(
            @ForAll("histories") List<Action> prefix,
            @ForAll("changes") Change change,
            @ForAll @IntRange(min = 1, max = 5) int servers,
            @ForAll @IntRange(min = 0, max = 40) int initialPids,
            @ForAll boolean throttled) {
        var sim = new ClusterSimulator(policy(throttled));
        List<ModuleKey> modules = List.of(sim.module("a", servers), sim.module("b", 2));
        sim.addPids(modules.get(0), initialPids);
        for (Action action : prefix) {
            play(sim, modules, action, false);
        }
        sim.quiesce(LONGEST, 100);
        sim.assertBalancedAndComplete();

        ModuleKey module = modules.get(0);
        List<ClusterSimulator.Instance> members = sim.liveIn(module);
        List<Integer> counts = new ArrayList<>(sim.counts(module).values());
        int total = sim.desired.get(module).size();
        int movesBefore = sim.moves();
        int addsBefore = sim.addsApplied;
        int expectedMoves;
        int expectedAdds;
        switch (change.kind()) {
            case JOIN -> {
                sim.join(module);
                counts.add(0);
                expectedMoves = Theory.minimumMoves(counts, total);
                // with nobody there the joiner takes only its slot's share; otherwise it gets the moved PIDs
                expectedAdds = members.isEmpty() ? -1 : expectedMoves;
            }
            case CRASH, LEAVE -> {
                if (members.isEmpty()) {
                    return;
                }
                ClusterSimulator.Instance gone = members.get(change.pick() % members.size());
                expectedMoves = 0;
                expectedAdds = members.size() == 1 ? 0 : gone.held().size();
                if (change.kind() == Kind.CRASH) {
                    sim.crash(gone.ref);
                } else {
                    sim.leave(gone.ref);
                }
            }
            default -> {
                sim.setServers(module, 1 + change.pick() % 6);
                expectedMoves = 0;
                expectedAdds = 0;
            }
        }
        sim.quiesce(LONGEST, 100);
        sim.assertBalancedAndComplete();
        assertThat(sim.moves() - movesBefore)
                .as("moves after %s on counts %s of %d PIDs", change, counts, total)
                .isEqualTo(expectedMoves);
        if (expectedAdds >= 0) {
            assertThat(sim.addsApplied - addsBefore).as("adds after %s", change).isEqualTo(expectedAdds);
        }
    }

    @Property(tries = 1000)
    void instancesStartingOneByOneIntoPreSplitSlotsNeverMoveAndReplacementsInheritTheShare(
            @ForAll @IntRange(min = 1, max = 8) int servers,
            @ForAll @IntRange(min = 0, max = 60) int pids,
            @ForAll @IntRange(min = 1, max = 8) int joiners,
            @ForAll @IntRange(min = 0, max = 7) int victim,
            @ForAll boolean graceful) {
        var sim = new ClusterSimulator(policy(false));
        ModuleKey module = sim.module("a", servers);
        sim.addPids(module, pids);
        sim.step();
        int starting = Math.min(joiners, servers);
        List<Integer> received = new ArrayList<>();
        for (int i = 0; i < starting; i++) {
            sim.advance(Duration.ofSeconds(1)); // joins, grace and replacement all fit in the rebalance delay
            InstanceRef joiner = sim.join(module);
            Plan plan = sim.step();
            assertThat(plan.adds()).allMatch(add -> add.instance().equals(joiner));
            received.add(plan.adds().size());
            sim.ackAll();
        }
        assertThat(sim.deletesByReason).as("nothing was ever taken away").isEmpty();
        List<Integer> preSplit = new ArrayList<>();
        for (int slot = 0; slot < starting; slot++) {
            preSplit.add(pids / servers + (slot < pids % servers ? 1 : 0));
        }
        assertThat(received).as("each got its slot's pre-split share").isEqualTo(preSplit);

        // one of them goes away; a replacement within the delay gets exactly its PIDs, nothing else moves
        ClusterSimulator.Instance gone = sim.liveIn(module).get(victim % starting);
        var share = gone.held();
        if (graceful) {
            sim.leave(gone.ref);
        } else {
            sim.crash(gone.ref);
        }
        sim.step();
        sim.advance(GRACE);
        sim.step();
        InstanceRef replacement = sim.join(module);
        Plan plan = sim.step();
        assertThat(plan.deletes()).isEmpty();
        assertThat(plan.adds()).allMatch(add -> add.instance().equals(replacement));
        assertThat(plan.adds()).extracting(PlanStep::pid).containsExactlyInAnyOrderElementsOf(share);
    }

    /**
     * The planner plans exactly what {@link ReferenceAllocationPlanner} (session 2's implementation,
     * kept in test scope) plans — the same steps in the same order, the same signals, the same next
     * state — on every snapshot of a random history, and on each of them again with random corruption
     * (duplicate holders, nodes in every state, PIDs held in the wrong module or wanted by nobody,
     * cooldowns).
     */
    @Property(tries = 500)
    void thePlannerPlansExactlyWhatTheReferencePlannerPlans(
            @ForAll("histories") List<Action> history,
            @ForAll @IntRange(min = 1, max = 5) int servers,
            @ForAll @IntRange(min = 0, max = 40) int initialPids,
            @ForAll boolean weighted,
            @ForAll boolean throttled,
            @ForAll long seed) {
        var sim = new ClusterSimulator(policy(throttled));
        var reference = new ReferenceAllocationPlanner(sim.policy);
        var random = new Random(seed);
        int[] compared = {0};
        sim.beforePlan = (snapshot, state) -> {
            assertSamePlan(reference.plan(snapshot, state, sim.now), sim.planner.plan(snapshot, state, sim.now));
            ClusterSnapshot corrupt = corrupt(snapshot, random, sim.now);
            assertSamePlan(reference.plan(corrupt, state, sim.now), sim.planner.plan(corrupt, state, sim.now));
            compared[0]++;
        };
        List<ModuleKey> modules = List.of(sim.module("a", servers), sim.module("b", 2));
        sim.addPids(modules.get(0), initialPids);
        sim.addPids(modules.get(1), initialPids / 2);
        for (Action action : history) {
            play(sim, modules, action, weighted);
        }
        sim.quiesce(LONGEST, 100);
        assertThat(compared[0]).isPositive();
    }

    private static void assertSamePlan(Plan expected, Plan actual) {
        assertThat(actual.steps()).isEqualTo(expected.steps());
        assertThat(actual.signals()).isEqualTo(expected.signals());
        assertThat(actual.nextState()).isEqualTo(expected.nextState());
        // reservations are sets, but their order feeds the next plan: it must match too
        assertThat(reservations(actual)).isEqualTo(reservations(expected));
    }

    private static List<List<String>> reservations(Plan plan) {
        return plan.nextState().modules().values().stream()
                .flatMap(module -> module.slots().stream())
                .map(slot -> List.copyOf(slot.reserved()))
                .toList();
    }

    /** The snapshot with random extra nodes on live and departed instances, and random cooldowns. */
    private static ClusterSnapshot corrupt(ClusterSnapshot snapshot, Random random, long now) {
        List<String> universe = new ArrayList<>(List.of("stray1", "stray2"));
        snapshot.modules().forEach(m -> universe.addAll(m.desiredPids()));
        PidState[] states = PidState.values();
        List<ModuleSnapshot> modules = new ArrayList<>();
        for (ModuleSnapshot module : snapshot.modules()) {
            List<LiveInstance> live = new ArrayList<>();
            for (LiveInstance instance : module.live()) {
                var nodes = new LinkedHashMap<>(instance.pids());
                for (int i = random.nextInt(4); i > 0; i--) {
                    nodes.put(universe.get(random.nextInt(universe.size())), states[random.nextInt(states.length)]);
                }
                live.add(new LiveInstance(
                        instance.id(), instance.sessionId(), instance.weight(), instance.registrationOrder(), nodes));
            }
            List<DepartedInstance> departed = new ArrayList<>();
            for (DepartedInstance instance : module.departed()) {
                var nodes = new LinkedHashMap<>(instance.pids());
                var released = new LinkedHashSet<>(instance.released());
                for (int i = random.nextInt(4); i > 0; i--) {
                    String pid = universe.get(random.nextInt(universe.size()));
                    nodes.put(pid, states[random.nextInt(states.length)]);
                    if (random.nextBoolean()) {
                        released.add(pid);
                    }
                }
                departed.add(new DepartedInstance(
                        instance.id(), instance.sessionId(), instance.departedAtNanos(), nodes, released));
            }
            var cooldowns = new HashMap<>(module.cooldowns());
            for (int i = random.nextInt(3); i > 0; i--) {
                cooldowns.put(
                        universe.get(random.nextInt(universe.size())), now + (random.nextInt(3) - 1) * 1_000_000_000L);
            }
            modules.add(new ModuleSnapshot(module.config(), module.desiredPids(), live, departed, cooldowns));
        }
        return new ClusterSnapshot(modules);
    }

    private static PlannerPolicy policy(boolean throttled) {
        return PlannerPolicy.defaults(GRACE)
                .withRebalanceDelay(DELAY)
                .withBrake(0.5, WINDOW)
                .withMoveLimits(throttled ? 2 : 1_000, throttled ? 3 : 10_000);
    }

    static void play(ClusterSimulator sim, List<ModuleKey> modules, Action action, boolean weighted) {
        ModuleKey module = modules.get(action.a() % modules.size());
        List<ClusterSimulator.Instance> members = sim.liveIn(module);
        int b = action.b();
        switch (action.kind()) {
            case JOIN -> {
                if (members.size() < MAX_LIVE_PER_MODULE) {
                    sim.join(module, weighted ? 1 + b % 3 : 1);
                }
            }
            case CRASH -> {
                if (!members.isEmpty()) {
                    sim.crash(members.get(b % members.size()).ref);
                }
            }
            case LEAVE -> {
                if (!members.isEmpty()) {
                    sim.leave(members.get(b % members.size()).ref);
                }
            }
            case SERVERS -> sim.setServers(module, 1 + b % 6);
            case ADD_PIDS -> {
                int total = sim.desired.values().stream()
                        .mapToInt(java.util.Set::size)
                        .sum();
                sim.addPids(module, Math.min(1 + b % 8, Math.max(0, MAX_PIDS - total)));
            }
            case REMOVE_PIDS -> {
                List<String> wanted = new ArrayList<>(sim.desired.get(module));
                for (int i = 0; i < 1 + b % 3 && !wanted.isEmpty(); i++) {
                    sim.removePid(wanted.remove((b + i) % wanted.size()));
                }
            }
            case MIGRATE -> {
                List<String> wanted = new ArrayList<>(sim.desired.get(module));
                if (!wanted.isEmpty()) {
                    sim.migrate(wanted.get(b % wanted.size()), modules.get((action.a() + 1) % modules.size()));
                }
            }
            case ACK_ALL -> sim.ackAll();
            case ACK_SOME -> sim.ackSome(b % 3, 2 + b % 3);
            case TICK_SMALL -> sim.advance(Duration.ofSeconds(2));
            case TICK_GRACE -> sim.advance(GRACE);
            case TICK_LONG -> sim.advance(LONGEST);
            case PLAN -> sim.step();
            case FAILOVER -> sim.state = PlannerState.EMPTY;
        }
        // the leader usually reacts to an event at once, sometimes only after several
        if (action.kind() != Kind.PLAN && b % 3 != 0) {
            sim.step();
        }
    }
}
