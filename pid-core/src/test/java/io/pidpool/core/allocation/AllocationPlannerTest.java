package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class AllocationPlannerTest {
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Duration DELAY = Duration.ofSeconds(60);
    private static final Duration LONGEST = Duration.ofMinutes(5);
    private static final PlannerPolicy POLICY =
            PlannerPolicy.defaults(GRACE).withRebalanceDelay(DELAY).withBrake(0.5, Duration.ofSeconds(120));

    private final ClusterSimulator sim = new ClusterSimulator(POLICY);

    /** A module of {@code servers} slots with {@code pids} PIDs and {@code instances} live instances, settled. */
    private ModuleKey settled(int servers, int pids, int instances) {
        ModuleKey module = sim.module("m", servers);
        sim.addPids(module, pids);
        for (int i = 0; i < instances; i++) {
            sim.join(module);
        }
        sim.quiesce(LONGEST, 10);
        sim.assertBalancedAndComplete();
        return module;
    }

    private List<InstanceRef> refs(ModuleKey module) {
        return sim.liveIn(module).stream().map(i -> i.ref).toList();
    }

    private Set<String> held(InstanceRef ref) {
        return sim.instance(ref).held();
    }

    private static Set<String> pidsAddedTo(Plan plan, InstanceRef ref) {
        return plan.adds().stream()
                .filter(a -> a.instance().equals(ref))
                .map(PlanStep::pid)
                .collect(Collectors.toSet());
    }

    // ---------------------------------------------------------------- balance and minimal movement

    @Test
    void joiningAFourthInstanceToTenPidsOnThreeMovesExactlyTheMinimum() {
        ModuleKey module = settled(3, 10, 3);
        List<InstanceRef> before = refs(module);
        assertThat(sim.counts(module).values()).containsExactly(4, 3, 3);
        int minimum = Theory.minimumMoves(List.of(4, 3, 3, 0), 10);
        assertThat(minimum).isEqualTo(2);

        InstanceRef joiner = sim.join(module); // more instances than slots: a scale-out
        Plan first = sim.step();

        assertThat(first.moves()).isEqualTo(minimum);
        assertThat(first.deletes()).hasSize(2).allMatch(d -> d.reason() == DeleteReason.REBALANCE);
        assertThat(first.deletes()).extracting(PlanStep::instance).containsOnlyOnce(before.get(0));
        assertThat(first.adds()).as("the moved PIDs are still DELETING").isEmpty();

        sim.ackAll();
        Plan second = sim.step();
        assertThat(second.deletes()).isEmpty();
        assertThat(pidsAddedTo(second, joiner))
                .containsExactlyInAnyOrderElementsOf(
                        first.deletes().stream().map(PlanStep::pid).toList());
        sim.ackAll();
        assertThat(sim.step().isEmpty()).isTrue();
        assertThat(sim.counts(module).values()).containsExactlyInAnyOrder(3, 3, 2, 2);
        assertThat(sim.moves()).isEqualTo(minimum);
    }

    @Test
    void aJoinAfterTheSharesWereSpreadTakesTheMinimumFromTheFullest() {
        ModuleKey module = settled(4, 10, 2);
        assertThat(sim.counts(module).values()).containsExactly(5, 5);
        sim.join(module);
        sim.quiesce(LONGEST, 10);
        sim.assertBalancedAndComplete();
        assertThat(sim.moves())
                .isEqualTo(Theory.minimumMoves(List.of(5, 5, 0), 10))
                .isEqualTo(3);
    }

    @Test
    void newPidsGoOnlyToInstancesBelowTarget() {
        ModuleKey module = settled(3, 10, 3);
        List<InstanceRef> refs = refs(module);
        sim.addPids(module, 2);
        Plan plan = sim.step();
        assertThat(plan.deletes()).isEmpty();
        assertThat(plan.adds()).extracting(PlanStep::instance).containsExactlyInAnyOrder(refs.get(1), refs.get(2));
    }

    @Test
    void pidsTheDatabaseNoLongerWantsAreDeletedWhereTheyAre() {
        ModuleKey module = settled(3, 10, 3);
        List<InstanceRef> refs = refs(module);
        String fromTheFullest = held(refs.get(0)).iterator().next();
        sim.removePid(fromTheFullest);

        Plan plan = sim.step();
        assertThat(plan.steps())
                .containsExactly(new PlanStep.Delete(module, refs.get(0), fromTheFullest, DeleteReason.UNWANTED));

        // 8 over 3 with counts 3, 2, 3: the instances at 3 keep the two larger targets, nothing moves
        String fromAnother = held(refs.get(1)).iterator().next();
        sim.removePid(fromAnother);
        sim.ackAll();
        assertThat(sim.step().steps())
                .containsExactly(new PlanStep.Delete(module, refs.get(1), fromAnother, DeleteReason.UNWANTED));

        // 7 over 3 with counts 3, 1, 3: one of the two at 3 must give one, and only one
        String again = held(refs.get(1)).iterator().next();
        sim.removePid(again);
        sim.ackAll();
        Plan plan3 = sim.step();
        assertThat(plan3.deletes())
                .contains(new PlanStep.Delete(module, refs.get(1), again, DeleteReason.UNWANTED))
                .filteredOn(d -> d.reason() == DeleteReason.REBALANCE)
                .hasSize(Theory.minimumMoves(List.of(3, 1, 3), 7))
                .hasSize(1);
    }

    @Test
    void roundingFavoursInstancesThatWouldOtherwiseGiveOverLargerInheritedClaims() {
        // a, b hold 3 each; r inherits a 4-PID reservation; c holds nothing; 10 PIDs over 4 units:
        // floor 2, two +1s. Giving them to a and b moves nothing; giving one to r would move one.
        ModuleKey key = ModuleKey.parse("d#m#s");
        var a = LiveInstance.of("a", 1, 1, states("p1", "p2", "p3"));
        var b = LiveInstance.of("b", 2, 2, states("p4", "p5", "p6"));
        var r = LiveInstance.of("r", 3, 3, Map.of());
        var c = LiveInstance.of("c", 4, 4, Map.of());
        var state = new PlannerState(Map.of(
                key,
                new ModuleState(
                        4,
                        List.of(
                                new SlotState(a.ref(), null, 0, 1, Set.of()),
                                new SlotState(b.ref(), null, 0, 1, Set.of()),
                                new SlotState(r.ref(), null, 0, 1, Set.of("p7", "p8", "p9", "p10")),
                                new SlotState(c.ref(), null, 0, 1, Set.of())),
                        Map.of())));
        var desired = new LinkedHashSet<String>();
        for (int i = 1; i <= 10; i++) {
            desired.add("p" + i);
        }
        var snapshot = ClusterSnapshot.of(
                new ModuleSnapshot(ModuleConfig.of(key, 4), desired, List.of(a, b, r, c), List.of()));

        Plan plan = new AllocationPlanner(POLICY).plan(snapshot, state, 1);

        assertThat(Theory.minimumMoves(List.of(3, 3, 0, 0), 10)).isZero();
        assertThat(plan.deletes()).isEmpty();
        assertThat(pidsAddedTo(plan, r.ref())).hasSize(2).isSubsetOf("p7", "p8", "p9", "p10");
        assertThat(pidsAddedTo(plan, c.ref())).hasSize(2);
    }

    private static Map<String, PidState> states(String... pids) {
        var states = new java.util.LinkedHashMap<String, PidState>();
        for (String pid : pids) {
            states.put(pid, PidState.ADDED);
        }
        return states;
    }

    @Test
    void weightsSplitByLargestRemainder() {
        ModuleKey module = sim.module("w", 3);
        sim.addPids(module, 13);
        InstanceRef one = sim.join(module, 1);
        InstanceRef two = sim.join(module, 2);
        InstanceRef three = sim.join(module, 3);
        sim.quiesce(LONGEST, 10);
        // 13 * 1/6 = 2.17, 13 * 2/6 = 4.33, 13 * 3/6 = 6.5: the +1 goes to the largest remainder
        assertThat(held(one)).hasSize(2);
        assertThat(held(two)).hasSize(4);
        assertThat(held(three)).hasSize(7);
        sim.assertBalancedAndComplete();
    }

    @Test
    void planningAgainOnAnAcknowledgedPlanIsEmptyAndKeepsTheState() {
        settled(3, 10, 3);
        sim.ackAll();
        PlannerState state = sim.state;
        Plan again = sim.planner.plan(sim.snapshot(), state, sim.now);
        assertThat(again.isEmpty()).isTrue();
        assertThat(again.nextState()).isEqualTo(state);
    }

    // ---------------------------------------------------------------- slots

    @Test
    void preSplitSlotsLetInstancesStartOneByOneWithoutReshuffling() {
        ModuleKey module = sim.module("m", 3);
        sim.addPids(module, 10);
        Plan empty = sim.step();
        assertThat(empty.isEmpty()).isTrue();
        assertThat(empty.signals(PlanSignal.Unassignable.class)).singleElement().satisfies(s -> assertThat(s.pids())
                .hasSize(10));
        assertThat(empty.signals(PlanSignal.VacancyReserved.class))
                .extracting(PlanSignal.VacancyReserved::reservedPids)
                .containsExactly(4, 3, 3);

        List<Integer> received = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            sim.advance(Duration.ofSeconds(5));
            InstanceRef joiner = sim.join(module);
            Plan plan = sim.step();
            received.add(pidsAddedTo(plan, joiner).size());
            assertThat(plan.adds()).allMatch(a -> a.instance().equals(joiner));
            sim.ackAll();
        }
        assertThat(received).containsExactly(4, 3, 3);
        assertThat(sim.deletesByReason).isEmpty();
        assertThat(sim.step().isEmpty()).isTrue();
    }

    @Test
    void aDeparturesPidsAreNotAddedAnywhereBeforeTheGracePeriodEvenWithoutRebalanceDelay() {
        var simNoDelay = new ClusterSimulator(POLICY.withRebalanceDelay(Duration.ZERO));
        ModuleKey module = simNoDelay.module("m", 3);
        simNoDelay.addPids(module, 10);
        for (int i = 0; i < 3; i++) {
            simNoDelay.join(module);
        }
        simNoDelay.quiesce(LONGEST, 10);
        InstanceRef dead = simNoDelay.liveIn(module).get(0).ref;
        Set<String> itsPids = simNoDelay.instance(dead).held();

        simNoDelay.crash(dead);
        Plan atOnce = simNoDelay.step();
        assertThat(atOnce.isEmpty()).isTrue();
        assertThat(atOnce.signals(PlanSignal.AwaitingRelease.class))
                .singleElement()
                .satisfies(s -> assertThat(s.pids()).isEqualTo(itsPids));

        simNoDelay.advance(GRACE.minusNanos(1));
        assertThat(simNoDelay.step().isEmpty())
                .as("one nanosecond before the grace ends")
                .isTrue();

        simNoDelay.advance(Duration.ofNanos(1));
        Plan afterGrace = simNoDelay.step();
        assertThat(afterGrace.releases()).containsExactly(new PlanStep.Release(module, dead, true));
        assertThat(afterGrace.adds()).extracting(PlanStep::pid).containsExactlyInAnyOrderElementsOf(itsPids);
        simNoDelay.ackAll();
        simNoDelay.assertBalancedAndComplete();
        assertThat(simNoDelay.counts(module).values()).containsExactly(5, 5);
    }

    @Test
    void aReplacementWithinTheRebalanceDelayGetsExactlyTheDeadSlotsShare() {
        ModuleKey module = settled(3, 10, 3);
        List<InstanceRef> refs = refs(module);
        Map<InstanceRef, Set<String>> before = Map.of(refs.get(1), held(refs.get(1)), refs.get(2), held(refs.get(2)));
        Set<String> deadShare = held(refs.get(0));

        sim.crash(refs.get(0));
        assertThat(sim.step().isEmpty()).isTrue();
        sim.advance(GRACE);
        Plan released = sim.step();
        assertThat(released.steps()).containsExactly(new PlanStep.Release(module, refs.get(0), true));
        assertThat(released.signals(PlanSignal.VacancyReserved.class))
                .singleElement()
                .satisfies(v -> assertThat(v.reservedPids()).isEqualTo(4));

        sim.advance(DELAY.minus(GRACE).minusSeconds(1));
        InstanceRef replacement = sim.join(module);
        Plan plan = sim.step();
        assertThat(plan.deletes()).isEmpty();
        assertThat(pidsAddedTo(plan, replacement)).isEqualTo(deadShare);
        assertThat(plan.adds()).hasSize(4);
        sim.ackAll();
        assertThat(sim.step().isEmpty()).isTrue();
        before.forEach((ref, pids) -> assertThat(held(ref)).isEqualTo(pids));
    }

    @Test
    void aReplacementThatJoinsDuringTheGracePeriodWaitsForItThenGetsTheShare() {
        ModuleKey module = settled(3, 10, 3);
        InstanceRef dead = refs(module).get(0);
        Set<String> deadShare = held(dead);
        sim.crash(dead);
        sim.step();
        sim.advance(Duration.ofSeconds(1));
        InstanceRef replacement = sim.join(module);
        assertThat(sim.step().isEmpty())
                .as("its share is still held by the departed")
                .isTrue();
        sim.advance(GRACE);
        Plan plan = sim.step();
        assertThat(plan.releases()).hasSize(1);
        assertThat(plan.adds()).hasSize(4);
        assertThat(pidsAddedTo(plan, replacement)).isEqualTo(deadShare);
    }

    @Test
    void afterTheRebalanceDelayTheShareIsSpreadOverTheLiveWithoutMoves() {
        ModuleKey module = settled(3, 10, 3);
        InstanceRef dead = refs(module).get(0);
        sim.crash(dead);
        sim.step();
        sim.advance(GRACE);
        assertThat(sim.step().adds()).isEmpty();
        sim.advance(DELAY.minus(GRACE).minusNanos(1));
        assertThat(sim.step().isEmpty())
                .as("one nanosecond before the delay ends")
                .isTrue();
        sim.advance(Duration.ofNanos(1));
        Plan spread = sim.step();
        assertThat(spread.deletes()).isEmpty();
        assertThat(spread.adds()).hasSize(4);
        sim.ackAll();
        assertThat(sim.counts(module).values()).containsExactly(5, 5);

        // a late replacement is an ordinary join: the minimum from the fullest
        sim.join(module);
        sim.quiesce(LONGEST, 10);
        sim.assertBalancedAndComplete();
        assertThat(sim.moves()).isEqualTo(Theory.minimumMoves(List.of(5, 5, 0), 10));
    }

    @Test
    void aModulesOwnRebalanceDelayDecidesWhenItsDepartedShareIsSpreadNotThePolicys() {
        Duration own = Duration.ofSeconds(20); // shorter than the policy's 60 s
        ModuleKey quick = sim.module("quick", 3);
        ModuleKey usual = sim.module("usual", 3);
        sim.delays.put(quick, own);
        for (ModuleKey module : List.of(quick, usual)) {
            sim.addPids(module, 9);
            for (int i = 0; i < 3; i++) {
                sim.join(module);
            }
        }
        sim.quiesce(LONGEST, 10);
        sim.crash(refs(quick).get(0));
        sim.crash(refs(usual).get(0));
        sim.step();
        sim.advance(own.minusNanos(1));
        assertThat(sim.step().adds())
                .as("one nanosecond before the module's delay ends")
                .isEmpty();
        sim.advance(Duration.ofNanos(1));
        Plan quickSpread = sim.step();
        assertThat(quickSpread.adds()).hasSize(3).allMatch(a -> a.module().equals(quick));
        sim.ackAll();
        sim.advance(DELAY.minus(own).minusNanos(1));
        assertThat(sim.step().adds())
                .as("the other module waits for the policy's delay")
                .isEmpty();
        sim.advance(Duration.ofNanos(1));
        Plan usualSpread = sim.step();
        assertThat(usualSpread.adds()).hasSize(3).allMatch(a -> a.module().equals(usual));
    }

    @Test
    void aGracefulLeaveFreesItsPidsAtOnceAndKeepsThemForItsSlot() {
        ModuleKey module = settled(3, 10, 3);
        InstanceRef leaving = refs(module).get(1);
        Set<String> share = held(leaving);
        sim.leave(leaving);
        Plan plan = sim.step();
        assertThat(plan.steps()).containsExactly(new PlanStep.Release(module, leaving, true));
        InstanceRef replacement = sim.join(module);
        assertThat(pidsAddedTo(sim.step(), replacement)).isEqualTo(share);
    }

    @Test
    void aServerCountChangeReSplitsWithoutMovingAndTheNewSlotFillsByJoin() {
        ModuleKey module = settled(3, 10, 3);
        sim.setServers(module, 4);
        Plan plan = sim.step();
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.nextState().module(module).slots()).hasSize(4);
        sim.join(module);
        sim.quiesce(LONGEST, 10);
        sim.assertBalancedAndComplete();
        assertThat(sim.moves()).isEqualTo(2);
    }

    @Test
    void shrinkingTheServerCountHandsReservedSharesToTheLive() {
        ModuleKey module = sim.module("m", 4);
        sim.addPids(module, 12);
        sim.join(module);
        sim.join(module);
        sim.step();
        sim.ackAll();
        assertThat(sim.counts(module).values()).containsExactly(3, 3);
        sim.setServers(module, 2);
        Plan plan = sim.step();
        assertThat(plan.deletes()).isEmpty();
        assertThat(plan.adds()).hasSize(6);
        sim.ackAll();
        sim.assertBalancedAndComplete();
    }

    // ---------------------------------------------------------------- exclusivity

    @Test
    void aPidBeingDeletedIsAddedElsewhereOnlyAfterItsAck() {
        ModuleKey module = settled(3, 10, 3);
        InstanceRef joiner = sim.join(module);
        Plan first = sim.step();
        List<String> moving = first.deletes().stream().map(PlanStep::pid).toList();
        assertThat(moving).hasSize(2);

        Plan unacked = sim.step();
        assertThat(unacked.isEmpty()).isTrue();
        assertThat(unacked.signals(PlanSignal.AwaitingRelease.class))
                .singleElement()
                .satisfies(s -> assertThat(s.pids()).containsExactlyInAnyOrderElementsOf(moving));

        sim.ackSome(0, 2); // the first DELETING only; the acked node stays in state DELETED
        Plan half = sim.step();
        assertThat(half.adds()).singleElement().satisfies(a -> {
            assertThat(a.instance()).isEqualTo(joiner);
            assertThat(a.pid()).isEqualTo(moving.get(0));
        });
        sim.ackAll();
        assertThat(sim.step().adds()).extracting(PlanStep::pid).containsExactly(moving.get(1));
    }

    @Test
    void aPidWrittenToTwoInstancesKeepsTheAcknowledgedOne() {
        ModuleKey key = ModuleKey.parse("d#m#s");
        var a = LiveInstance.of("a", 1, 1, Map.of("p1", PidState.ADDING, "p2", PidState.ADDED));
        var b = LiveInstance.of("b", 2, 2, Map.of("p1", PidState.ADDED, "p2", PidState.ADDED, "p3", PidState.ADDED));
        var snapshot = ClusterSnapshot.of(
                new ModuleSnapshot(ModuleConfig.of(key, 2), Set.of("p1", "p2", "p3"), List.of(a, b), List.of()));
        Plan plan = new AllocationPlanner(POLICY).plan(snapshot, PlannerState.EMPTY, 0);
        // p1: b acknowledged it, a did not; p2: both acknowledged, the earlier registration keeps it
        assertThat(plan.deletes())
                .containsExactlyInAnyOrder(
                        new PlanStep.Delete(key, a.ref(), "p1", DeleteReason.DUPLICATE),
                        new PlanStep.Delete(key, b.ref(), "p2", DeleteReason.DUPLICATE));
        assertThat(plan.adds()).isEmpty();
        assertThat(plan.moves()).isZero();
    }

    @Test
    void aMigratingPidIsAddedInItsNewModuleOnlyAfterTheOldHolderLetGo() {
        ModuleKey from = sim.module("from", 1);
        ModuleKey to = sim.module("to", 1);
        String pid = sim.addPids(from, 1).get(0);
        InstanceRef oldHolder = sim.join(from);
        InstanceRef newHolder = sim.join(to);
        sim.quiesce(LONGEST, 10);

        sim.migrate(pid, to);
        Plan plan = sim.step();
        assertThat(plan.steps()).containsExactly(new PlanStep.Delete(from, oldHolder, pid, DeleteReason.UNWANTED));
        assertThat(plan.signals(PlanSignal.AwaitingRelease.class))
                .singleElement()
                .satisfies(s -> assertThat(s.module()).isEqualTo(to));
        assertThat(sim.step().isEmpty()).isTrue();
        sim.ackAll();
        assertThat(sim.step().steps()).containsExactly(new PlanStep.Add(to, newHolder, pid));
    }

    @Test
    void aDepartedSessionOfTheSameNameKeepsItsPidsUntilGraceAndIsReleasedWithoutItsNode() {
        ModuleKey key = ModuleKey.parse("d#m#s");
        var reborn = new LiveInstance(InstanceId.of("a"), 2, 1, 5, Map.of());
        var old = DepartedInstance.crashed("a", 1, 100, Map.of("p1", PidState.ADDED));
        var snapshot = ClusterSnapshot.of(
                new ModuleSnapshot(ModuleConfig.of(key, 1), Set.of("p1"), List.of(reborn), List.of(old)));
        var planner = new AllocationPlanner(POLICY);

        assertThat(planner.plan(snapshot, PlannerState.EMPTY, 100 + GRACE.toNanos() - 1)
                        .isEmpty())
                .isTrue();
        Plan plan = planner.plan(snapshot, PlannerState.EMPTY, 100 + GRACE.toNanos());
        assertThat(plan.steps())
                .containsExactly(
                        new PlanStep.Release(key, old.ref(), false), new PlanStep.Add(key, reborn.ref(), "p1"));
    }

    // ---------------------------------------------------------------- throttle and brake

    @Test
    void theThrottleLimitsMovesPerModuleAndTheTotalStaysMinimal() {
        var throttled = new ClusterSimulator(POLICY.withMoveLimits(1, 100));
        ModuleKey module = throttled.module("m", 3);
        throttled.addPids(module, 10);
        for (int i = 0; i < 3; i++) {
            throttled.join(module);
        }
        throttled.quiesce(LONGEST, 10);
        throttled.join(module);
        Plan first = throttled.step();
        assertThat(first.moves()).isEqualTo(1);
        assertThat(first.signals(PlanSignal.Throttled.class)).containsExactly(new PlanSignal.Throttled(module, 1));
        throttled.quiesce(LONGEST, 10);
        throttled.assertBalancedAndComplete();
        assertThat(throttled.moves()).isEqualTo(2);
    }

    @Test
    void theClusterWideThrottleIsSharedInModuleOrder() {
        var throttled = new ClusterSimulator(POLICY.withMoveLimits(100, 1));
        ModuleKey first = throttled.module("a", 1);
        ModuleKey second = throttled.module("b", 1);
        throttled.addPids(first, 10);
        throttled.addPids(second, 10);
        throttled.join(first);
        throttled.join(second);
        throttled.quiesce(LONGEST, 10);
        throttled.join(first);
        throttled.join(second);
        Plan plan = throttled.step();
        assertThat(plan.deletes()).singleElement().satisfies(d -> assertThat(d.module())
                .isEqualTo(first));
        assertThat(plan.signals(PlanSignal.Throttled.class))
                .extracting(PlanSignal::module)
                .containsExactly(first, second);
        throttled.quiesce(LONGEST, 30);
        throttled.assertBalancedAndComplete();
        assertThat(throttled.moves()).isEqualTo(10);
    }

    @Test
    void aMassFailureEngagesTheBrakeUntilTheWindowHasPassed() {
        var braking = new ClusterSimulator(POLICY.withBrake(0.5, Duration.ofMinutes(10)));
        ModuleKey module = braking.module("m", 4);
        braking.addPids(module, 12);
        for (int i = 0; i < 4; i++) {
            braking.join(module);
        }
        braking.step();
        braking.ackAll();
        braking.advance(Duration.ofMinutes(11));
        List<InstanceRef> refs = braking.liveIn(module).stream().map(i -> i.ref).toList();
        InstanceRef survivor = refs.get(3);
        braking.crash(refs.get(0));
        braking.crash(refs.get(1));
        Plan two = braking.step();
        assertThat(two.signals(PlanSignal.BrakeEngaged.class)).isEmpty(); // 2 of 4 is not more than half
        braking.crash(refs.get(2));
        Plan three = braking.step();
        assertThat(three.signals(PlanSignal.BrakeEngaged.class))
                .containsExactly(new PlanSignal.BrakeEngaged(module, 3, 4));

        braking.advance(DELAY.plus(GRACE)); // grace and rebalance delay passed, the window has not
        Plan braked = braking.step();
        assertThat(braked.adds()).as("no stampede onto the survivor").isEmpty();
        assertThat(braked.releases()).hasSize(3);
        assertThat(braked.signals(PlanSignal.VacancyReserved.class)).hasSize(3);

        InstanceRef back = braking.join(module); // an instance coming back takes its slot's share
        assertThat(pidsAddedTo(braking.step(), back)).hasSize(3);
        braking.ackAll();

        braking.advance(Duration.ofMinutes(10));
        Plan released = braking.step();
        assertThat(released.signals(PlanSignal.BrakeEngaged.class)).isEmpty();
        assertThat(released.adds()).hasSize(6);
        assertThat(pidsAddedTo(released, survivor)).hasSize(3);
        braking.ackAll();
        braking.assertBalancedAndComplete();
        assertThat(braking.moves()).isZero();
    }

    @Test
    void closingAModulesOnlyInstanceGracefullyEngagesNoBrake() {
        var braking = new ClusterSimulator(POLICY.withBrake(0.5, Duration.ofMinutes(10)));
        ModuleKey module = braking.module("m", 1);
        braking.addPids(module, 3);
        InstanceRef only = braking.join(module);
        braking.step();
        braking.ackAll();
        braking.leave(only); // close(): DELETED for everything it held, then its ephemeral node goes
        Plan left = braking.step();
        assertThat(left.signals(PlanSignal.BrakeEngaged.class)).isEmpty();
        assertThat(left.signals(PlanSignal.Unassignable.class)).hasSize(1);
    }

    @Test
    void gracefulLeavesDoNotCountTowardsTheBrake() {
        var braking = new ClusterSimulator(POLICY.withBrake(0.5, Duration.ofMinutes(10)));
        ModuleKey module = braking.module("m", 4);
        braking.addPids(module, 12);
        for (int i = 0; i < 4; i++) {
            braking.join(module);
        }
        braking.step();
        braking.ackAll();
        List<InstanceRef> refs = braking.liveIn(module).stream().map(i -> i.ref).toList();
        for (int i = 0; i < 3; i++) {
            braking.leave(refs.get(i)); // a rolling shutdown of three of four
        }
        Plan left = braking.step();
        assertThat(left.signals(PlanSignal.BrakeEngaged.class)).isEmpty();
        braking.advance(DELAY.plus(GRACE));
        braking.step();
        braking.ackAll();
        braking.step();
        braking.ackAll();
        assertThat(braking.liveIn(module).get(0).nodes).hasSize(12); // the survivor took the released shares
        // two instances now: a crash brakes nothing (too small a module, and not more than half)
        InstanceRef joiner = braking.join(module);
        braking.step();
        braking.ackAll();
        braking.crash(joiner);
        assertThat(braking.step().signals(PlanSignal.BrakeEngaged.class)).isEmpty();
    }

    @Test
    void theBrakeAppliesOnlyToModulesOfAtLeastThreeInstances() {
        var braking = new ClusterSimulator(POLICY.withBrake(0.5, Duration.ofMinutes(10)));
        ModuleKey one = braking.module("one", 1);
        ModuleKey two = braking.module("two", 2);
        ModuleKey three = braking.module("three", 3);
        braking.addPids(one, 3);
        braking.addPids(two, 4);
        braking.addPids(three, 6);
        InstanceRef single = braking.join(one);
        List<InstanceRef> pair = List.of(braking.join(two), braking.join(two));
        List<InstanceRef> trio = List.of(braking.join(three), braking.join(three), braking.join(three));
        braking.step();
        braking.ackAll();
        braking.crash(single);
        pair.forEach(braking::crash);
        braking.crash(trio.get(0));
        braking.crash(trio.get(1));
        Plan crashed = braking.step();
        assertThat(crashed.signals(PlanSignal.BrakeEngaged.class))
                .containsExactly(new PlanSignal.BrakeEngaged(three, 2, 3));
    }

    @Test
    void theBrakeHoldsBackTheSharesOfVanishedScaleOutInstancesAndRebalancingMoves() {
        var braking = new ClusterSimulator(POLICY.withBrake(0.5, Duration.ofMinutes(10)));
        ModuleKey module = braking.module("m", 1); // one configured slot, three extra ones
        braking.addPids(module, 12);
        for (int i = 0; i < 4; i++) {
            braking.join(module);
        }
        braking.quiesce(Duration.ofMinutes(11), 10);
        List<InstanceRef> refs = braking.liveIn(module).stream().map(i -> i.ref).toList();
        for (int i = 1; i < 4; i++) {
            braking.crash(refs.get(i));
        }
        braking.step();
        braking.advance(DELAY.plus(GRACE));
        Plan braked = braking.step();
        assertThat(braked.signals(PlanSignal.BrakeEngaged.class)).hasSize(1);
        assertThat(braked.adds()).isEmpty();

        // an instance joining while braked takes one vacated slot's share and nothing else moves
        // (3 vanished of 5 is still more than half; joiners do count as instances)
        InstanceRef joiner = braking.join(module);
        Plan joined = braking.step();
        assertThat(joined.signals(PlanSignal.BrakeEngaged.class))
                .containsExactly(new PlanSignal.BrakeEngaged(module, 3, 5));
        assertThat(joined.moves()).isZero();
        assertThat(pidsAddedTo(joined, joiner)).hasSize(3);
        assertThat(joined.adds()).hasSize(3);
        braking.ackAll();

        braking.advance(Duration.ofMinutes(10));
        braking.quiesce(LONGEST, 10);
        braking.assertBalancedAndComplete();
        assertThat(braking.moves()).isZero();
    }

    // ---------------------------------------------------------------- failover and bad input

    @Test
    void aNewLeaderWithoutStateMovesNothingAndStillWaitsForTheGrace() {
        ModuleKey module = settled(4, 12, 4);
        InstanceRef dead = refs(module).get(0);
        sim.crash(dead);
        Plan fresh = sim.planner.plan(sim.snapshot(), PlannerState.EMPTY, sim.now);
        assertThat(fresh.isEmpty()).isTrue();
        sim.state = fresh.nextState();
        sim.advance(GRACE);
        Plan afterGrace = sim.step();
        assertThat(afterGrace.steps()).containsExactly(new PlanStep.Release(module, dead, true));
        assertThat(afterGrace.signals(PlanSignal.VacancyReserved.class))
                .singleElement()
                .satisfies(v -> assertThat(v.reservedPids()).isEqualTo(3));
    }

    @Test
    void badInputIsRejectedWithAClearError() {
        var planner = new AllocationPlanner(POLICY);
        ModuleKey a = ModuleKey.parse("d#a#s");
        ModuleKey b = ModuleKey.parse("d#b#s");
        var twice = ClusterSnapshot.of(
                new ModuleSnapshot(ModuleConfig.of(a, 1), Set.of("p1"), List.of(), List.of()),
                new ModuleSnapshot(ModuleConfig.of(b, 1), Set.of("p1"), List.of(), List.of()));
        assertThatThrownBy(() -> planner.plan(twice, PlannerState.EMPTY, 0))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.field()).isEqualTo("desiredPids");
                    assertThat(e.getMessage()).contains("p1", "d#a#s", "d#b#s");
                });

        var future = ClusterSnapshot.of(new ModuleSnapshot(
                ModuleConfig.of(a, 1), Set.of(), List.of(), List.of(DepartedInstance.crashed("x", 1, 500, Map.of()))));
        assertThatThrownBy(() -> planner.plan(future, PlannerState.EMPTY, 499))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("departedAtNanos"));

        assertThatThrownBy(() -> new ModuleSnapshot(
                        ModuleConfig.of(a, 1),
                        Set.of(),
                        List.of(LiveInstance.of("x", 1, 1, Map.of()), LiveInstance.of("x", 2, 2, Map.of())),
                        List.of()))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("live"));
        assertThatThrownBy(() -> PlannerPolicy.defaults(Duration.ofSeconds(-1)))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("grace"));
        assertThatThrownBy(() -> POLICY.withBrake(0, Duration.ZERO))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("brakeShare"));
        assertThatThrownBy(() -> new LiveInstance(InstanceId.of("x"), 1, 0, 1, Map.of()))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("weight"));
    }

    @Test
    void theSnapshotIsACopy() {
        var pids = new LinkedHashSet<>(List.of("p1"));
        ModuleKey key = ModuleKey.parse("d#m#s");
        var module = new ModuleSnapshot(ModuleConfig.of(key, 1), pids, List.of(), List.of());
        pids.add("p2");
        assertThat(module.desiredPids()).containsExactly("p1");
    }
}
