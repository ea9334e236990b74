package io.pidpool.core.allocation;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.ModuleKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Random histories of joins, crashes, leaves, cooldowns of held and unheld PIDs, acks and time
 * steps (manual time, no sleeping) against {@link ClusterSimulator}: no plan ever adds a PID whose
 * cooldown has not ended at the time of the plan; once acknowledged, nobody holds a cooling PID;
 * and once every cooldown has ended, the cluster settles balanced and complete.
 */
class CooldownProperties {
    private static final Duration GRACE = Duration.ofSeconds(10);
    private static final Duration LONGEST = Duration.ofSeconds(31);
    private static final PlannerPolicy POLICY = PlannerPolicy.defaults(GRACE)
            .withRebalanceDelay(Duration.ofSeconds(30))
            .withBrake(0.5, Duration.ofSeconds(20));

    enum Kind {
        JOIN,
        CRASH,
        LEAVE,
        COOL_HELD,
        COOL_ANY,
        ACK_ALL,
        TICK_SMALL,
        TICK_LONG
    }

    record Action(Kind kind, int a, int b) {}

    @Provide
    Arbitrary<List<Action>> histories() {
        Arbitrary<Kind> kinds = Arbitraries.frequency(
                Tuple.of(4, Kind.JOIN),
                Tuple.of(2, Kind.CRASH),
                Tuple.of(1, Kind.LEAVE),
                Tuple.of(4, Kind.COOL_HELD),
                Tuple.of(2, Kind.COOL_ANY),
                Tuple.of(6, Kind.ACK_ALL),
                Tuple.of(5, Kind.TICK_SMALL),
                Tuple.of(2, Kind.TICK_LONG));
        Arbitrary<Integer> picks = Arbitraries.integers().between(0, 999);
        return Combinators.combine(kinds, picks, picks)
                .as(Action::new)
                .list()
                .ofMinSize(5)
                .ofMaxSize(60);
    }

    @Property(tries = 500)
    void aCoolingPidIsNeverAddedAndEverythingSettlesOnceCooldownsEnd(@ForAll("histories") List<Action> history) {
        var sim = new ClusterSimulator(POLICY);
        ModuleKey module = sim.module("m", 3);
        sim.addPids(module, 20);
        sim.join(module);
        for (Action action : history) {
            play(sim, module, action);
            Plan plan = sim.step();
            for (PlanStep.Add add : plan.adds()) {
                Long end = sim.cooldowns.get(add.pid());
                assertThat(end == null || sim.now - end >= 0)
                        .as("%s added during its cooldown (ends %d, now %d)", add.pid(), end, sim.now)
                        .isTrue();
            }
            if (action.kind() == Kind.ACK_ALL) {
                sim.ackAll();
                sim.step();
                sim.ackAll();
                for (var e : sim.cooldowns.entrySet()) {
                    if (sim.now - e.getValue() < 0) {
                        assertThat(sim.liveIn(module).stream()
                                        .filter(i -> i.held().contains(e.getKey()))
                                        .toList())
                                .as("%s is held during its cooldown", e.getKey())
                                .isEmpty();
                    }
                }
            }
        }
        sim.advance(Duration.ofMinutes(10).plus(LONGEST));
        if (sim.liveIn(module).isEmpty()) {
            sim.join(module);
        }
        sim.quiesce(LONGEST, 20);
        sim.assertBalancedAndComplete();
    }

    private static void play(ClusterSimulator sim, ModuleKey module, Action action) {
        List<ClusterSimulator.Instance> members = sim.liveIn(module);
        int b = action.b();
        switch (action.kind()) {
            case JOIN -> {
                if (members.size() < 5) {
                    sim.join(module);
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
            case COOL_HELD -> {
                List<String> held = new ArrayList<>();
                members.forEach(i -> held.addAll(i.held()));
                if (!held.isEmpty()) {
                    sim.coolDown(held.get(b % held.size()), Duration.ofSeconds(1 + action.a() % 600));
                }
            }
            case COOL_ANY -> {
                List<String> all = new ArrayList<>(sim.desired.get(module));
                sim.coolDown(all.get(b % all.size()), Duration.ofSeconds(1 + action.a() % 600));
            }
            case ACK_ALL -> sim.ackAll();
            case TICK_SMALL -> sim.advance(Duration.ofSeconds(1 + b % 5));
            case TICK_LONG -> sim.advance(LONGEST);
        }
    }
}
