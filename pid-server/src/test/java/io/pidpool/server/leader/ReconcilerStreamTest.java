package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.server.zk.ZkWrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A pass hands its intents to a sink as it decides them (PassRunner sends each at once): the same
 * intents as without a sink, in an order that keeps "delete first, then add" and puts each new
 * instance's handshake right before its share.
 */
class ReconcilerStreamTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final Epoch OLD = new Epoch(1);
    static final Epoch E = new Epoch(2);
    static final Duration GRACE = Duration.ofSeconds(2);
    static final long T0 = 1_000_000_000L;
    static final String[] PIDS =
            IntStream.rangeClosed(1, 40).mapToObj(i -> "p" + i).toArray(String[]::new);

    final LeaderSettings settings = LeaderSettings.defaults()
            .withGrace(GRACE)
            .withFailurePolicy(Duration.ofSeconds(30), 3, Duration.ofSeconds(1), Duration.ofMinutes(10));

    /** One term start's worth of everything: removals, re-stamps, revokes, releases, handshakes, adds. */
    final class Scenario {
        final ViewFixture fx = new ViewFixture();
        final TermBookkeeping state = new TermBookkeeping();
        final PlacementPolicy policy =
                new PlannerPlacement(PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ZERO));
        final DbView db = new DbFixture().module(M, 4, PIDS).view();
        final Reconciler reconciler = new Reconciler(ViewFixture.LAYOUT, settings);

        Scenario() {
            InstanceKey held = fx.instance(M, "i-1", 11, true);
            fx.pid(held, "p1", PidState.ADDED, E, 11);
            fx.pid(held, "p2", PidState.DELETED, E, 11); // answered a revoke: removed
            state.replay(new TermEvent.RevokeSent(ViewFixture.LAYOUT.pid(M, held.instance(), "p2")));
            fx.pid(held, "p3", PidState.DELETING, OLD, 11); // a predecessor's revoke: re-stamped
            fx.pid(held, "x9", PidState.ADDED, E, 11); // not wanted by the database: revoked
            InstanceKey gone = fx.instance(M, "gone", 44, true);
            fx.pid(gone, "p4", PidState.ADDED, E, 44);
            fx.vanish(gone);
            // the leader sees it gone at T0; its node is released after the grace period
            decide(T0, intent -> {});
            state.replay(new TermEvent.RevokeSent(ViewFixture.LAYOUT.pid(M, held.instance(), "p2")));
            fx.instance(M, "i-2", 22, false); // new: handshake and share
            fx.instance(M, "i-3", 33, false);
        }

        Reconciler.Decision decide(long now, Consumer<Intent> sink) {
            return reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), now, Reconciler.Scope.FULL, sink);
        }

        Reconciler.Decision termStart(Consumer<Intent> sink) {
            return decide(T0 + GRACE.toNanos(), sink);
        }
    }

    static String describe(Intent intent) {
        return intent.kind() + " " + intent.holder() + " " + intent.pid() + " "
                + intent.writes().stream().map(ZkWrite::path).toList();
    }

    @Test
    void theSinkGetsEveryIntentOfTheDecisionInItsOrderAndTheSameIntentsAsWithoutASink() {
        List<Intent> streamed = new ArrayList<>();
        var withSink = new Scenario().termStart(streamed::add);
        var without = new Scenario().termStart(intent -> {});

        assertThat(streamed).containsExactlyElementsOf(withSink.intents());
        assertThat(withSink.intents())
                .extracting(ReconcilerStreamTest::describe)
                .containsExactlyElementsOf(without.intents().stream()
                        .map(ReconcilerStreamTest::describe)
                        .toList());
        // the scenario has every kind of term-start work
        assertThat(streamed)
                .extracting(Intent::kind)
                .contains(Intent.Kind.REMOVE_NODE, Intent.Kind.REVOKE, Intent.Kind.HANDSHAKE, Intent.Kind.ADD);
        assertThat(streamed)
                .filteredOn(i -> "p4".equals(i.pid()))
                .extracting(Intent::kind)
                .containsExactly(Intent.Kind.REMOVE_NODE); // released after grace, added by a later pass
    }

    @Test
    void everythingButTheAddsIsSentBeforeTheFirstAddAndEachHandshakeRightBeforeItsShare() {
        List<Intent> streamed = new ArrayList<>();
        new Scenario().termStart(streamed::add);

        int firstAdd = IntStream.range(0, streamed.size())
                .filter(i -> streamed.get(i).kind() == Intent.Kind.ADD)
                .findFirst()
                .orElseThrow();
        for (int i = firstAdd; i < streamed.size(); i++) {
            assertThat(streamed.get(i).kind())
                    .as("delete first, then add: %s", streamed.get(i))
                    .isIn(Intent.Kind.ADD, Intent.Kind.HANDSHAKE);
        }
        Set<InstanceKey> handshaken = new HashSet<>();
        for (int i = 0; i < streamed.size(); i++) {
            Intent intent = streamed.get(i);
            if (intent.kind() == Intent.Kind.HANDSHAKE) {
                handshaken.add(intent.holder());
                assertThat(i + 1)
                        .as("a handshake with a share is followed by it")
                        .isLessThan(streamed.size());
                assertThat(streamed.get(i + 1).kind()).isEqualTo(Intent.Kind.ADD);
                assertThat(streamed.get(i + 1).holder()).isEqualTo(intent.holder());
            }
        }
        assertThat(handshaken).extracting(k -> k.instance().value()).containsExactlyInAnyOrder("i-2", "i-3");
        for (Intent add : streamed.subList(firstAdd, streamed.size())) {
            if (add.kind() == Intent.Kind.ADD
                    && !add.holder().instance().value().equals("i-1")) {
                int at = streamed.indexOf(add);
                assertThat(streamed.subList(0, at))
                        .as("the handshake of %s precedes its add of %s", add.holder(), add.pid())
                        .anyMatch(i ->
                                i.kind() == Intent.Kind.HANDSHAKE && i.holder().equals(add.holder()));
            }
        }
    }

    @Test
    void intentsLeaveBeforeThePlacementIsEvenComputed() {
        var scenario = new Scenario();
        List<Intent> streamed = new ArrayList<>();
        List<Integer> sentWhenPlanned = new ArrayList<>();
        PlacementPolicy inner = scenario.policy;
        PlacementPolicy observing = (modules, now) -> {
            sentWhenPlanned.add(streamed.size());
            return inner.plan(modules, now);
        };
        scenario.reconciler.decide(
                scenario.fx.view,
                scenario.db,
                scenario.state,
                observing,
                E,
                GRACE.toNanos(),
                T0 + GRACE.toNanos(),
                Reconciler.Scope.FULL,
                streamed::add);
        // housekeeping (the removal of p2, the re-stamp of p3) is on its way while the placement runs
        assertThat(sentWhenPlanned).singleElement().satisfies(n -> assertThat(n).isGreaterThanOrEqualTo(2));
        assertThat(streamed.subList(0, sentWhenPlanned.get(0)))
                .extracting(Intent::kind)
                .doesNotContain(Intent.Kind.ADD, Intent.Kind.HANDSHAKE);
    }

    @Test
    void thePassDecidesAgainstTheStateItStartedWithAndRecordsNothingAsIssued() {
        var scenario = new Scenario();
        var decision = scenario.termStart(intent -> {});
        assertThat(decision.intents()).isNotEmpty();
        assertThat(scenario.state.writesInFlight()).isZero(); // the caller records what it sent
        assertThat(scenario.state.addsInFlight()).isEmpty();
    }

    @Test
    void aFailureMidStreamLeavesAPrefixSentAndTheRestUndecided() {
        List<Intent> all = new ArrayList<>();
        new Scenario().termStart(all::add);

        var scenario = new Scenario();
        List<Intent> sent = new ArrayList<>();
        int failAt = all.size() / 2;
        assertThatThrownBy(() -> scenario.termStart(intent -> {
                    if (sent.size() == failAt) {
                        throw new IllegalStateException("writer refused");
                    }
                    sent.add(intent);
                }))
                .hasMessage("writer refused");
        assertThat(sent)
                .extracting(ReconcilerStreamTest::describe)
                .containsExactlyElementsOf(all.subList(0, failAt).stream()
                        .map(ReconcilerStreamTest::describe)
                        .toList());
        // the caller records the prefix as issued (PassRunner does, in a finally): the next pass
        // decides only what was not sent
        sent.forEach(i -> scenario.state.replay(new TermEvent.WriteIssued(i)));
        List<Intent> next = new ArrayList<>();
        scenario.decide(T0 + GRACE.toNanos() + 1, next::add);
        Set<String> sentPaths = new HashSet<>();
        sent.forEach(i -> i.writes().forEach(w -> sentPaths.add(w.path())));
        assertThat(next).as("what was not sent is decided again").isNotEmpty();
        assertThat(next).allSatisfy(i -> assertThat(i.writes()).noneMatch(w -> sentPaths.contains(w.path())));
    }
}
