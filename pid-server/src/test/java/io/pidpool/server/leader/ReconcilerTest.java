package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.zk.ZkWrite;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.Test;

class ReconcilerTest {
    static final ModuleKey M = ModuleKey.parse("a#b#c");
    static final Epoch E = new Epoch(2);
    static final Duration GRACE = Duration.ofSeconds(2);
    static final long T0 = 1_000_000_000L;

    final LeaderSettings settings = LeaderSettings.defaults()
            .withGrace(GRACE)
            .withFailurePolicy(Duration.ofSeconds(30), 3, Duration.ofSeconds(1), Duration.ofMinutes(10));
    final Reconciler reconciler = new Reconciler(ViewFixture.LAYOUT, settings);
    final TermBookkeeping state = new TermBookkeeping();
    final PlacementPolicy policy =
            new PlannerPlacement(PlannerPolicy.defaults(GRACE).withRebalanceDelay(Duration.ZERO));
    final ViewFixture fx = new ViewFixture();
    DbView db = new DbFixture().module(M, 2, "p1", "p2", "p3", "p4").view();

    Reconciler.Decision decide(long now) {
        return reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), now);
    }

    static List<Intent> of(Reconciler.Decision d, Intent.Kind kind) {
        return d.intents().stream().filter(i -> i.kind() == kind).toList();
    }

    static PidNode written(Intent intent) {
        ZkWrite last = intent.writes().get(intent.writes().size() - 1);
        byte[] data = last instanceof ZkWrite.Create c ? c.data() : ((ZkWrite.SetData) last).data();
        return PidNode.decode(data);
    }

    /**
     * docs/design.md §5: the leader creates the pids node, writes its path into the instance node, then the
     * share as ADDING. The share no longer waits for the handshake's answer (a round trip and a pass):
     * it is decided in the same pass and submitted after the handshake, and one session's writes are
     * applied in order, so the creates reach ZooKeeper behind the pids node and the pointer.
     */
    @Test
    void aNewInstanceGetsItsPidsNodeAndItsPathFirstAndItsShareRightBehindThem() {
        InstanceKey key = fx.instance(M, "i-1", 11, false);
        var d = decide(T0);
        Intent handshake = d.intents().get(0);
        assertThat(handshake.kind()).isEqualTo(Intent.Kind.HANDSHAKE);
        String pidsPath = ViewFixture.LAYOUT.pids(M, key.instance());
        assertThat(handshake.writes().get(0)).isInstanceOf(ZkWrite.Create.class);
        assertThat(handshake.writes().get(0).path()).isEqualTo(pidsPath);
        var set = (ZkWrite.SetData) handshake.writes().get(1);
        assertThat(set.version()).isZero();
        assertThat(InstanceNode.decode(set.data()).pidsPath()).isEqualTo(pidsPath);
        List<Intent> rest = d.intents().subList(1, d.intents().size());
        assertThat(rest).extracting(Intent::kind).containsOnly(Intent.Kind.ADD);
        assertThat(rest).extracting(Intent::pid).containsExactlyInAnyOrder("p1", "p2", "p3", "p4");
        assertThat(rest)
                .allSatisfy(add -> assertThat(add.writes()).singleElement().satisfies(w -> assertThat(w.path())
                        .startsWith(pidsPath + "/")));
    }

    @Test
    void eachNewInstancesShareDirectlyFollowsItsOwnHandshake() {
        fx.instance(M, "i-1", 11, false);
        fx.instance(M, "i-2", 22, false);
        List<Intent> intents = decide(T0).intents();
        assertThat(intents).hasSize(6);
        String current = null;
        for (Intent intent : intents) {
            if (intent.kind() == Intent.Kind.HANDSHAKE) {
                current = intent.holder().instance().value();
            } else {
                assertThat(intent.kind()).isEqualTo(Intent.Kind.ADD);
                assertThat(intent.holder().instance().value()).isEqualTo(current);
            }
        }
        assertThat(intents).filteredOn(i -> i.kind() == Intent.Kind.HANDSHAKE).hasSize(2);
    }

    @Test
    void whileTheHandshakeIsInFlightTheShareFollowsItButTheHandshakeIsNotSentAgain() {
        InstanceKey key = fx.instance(M, "i-1", 11, false);
        Intent handshake = new Intent(
                Intent.Kind.HANDSHAKE,
                key,
                null,
                List.of(new ZkWrite.Create(
                        ViewFixture.LAYOUT.pids(M, key.instance()), new byte[0], CreateMode.PERSISTENT)),
                Map.of(),
                "handshake");
        state.replay(new TermEvent.WriteIssued(handshake));
        var d = decide(T0);
        assertThat(d.intents()).extracting(Intent::kind).containsOnly(Intent.Kind.ADD);
        assertThat(d.intents()).hasSize(4);
        state.replay(new TermEvent.WriteSettled(handshake));
        assertThat(state.handshakeInFlight(key)).isFalse();
    }

    @Test
    void aLiveInstanceWhoseHandshakeCannotBeWrittenGetsNothing() {
        InstanceKey key = fx.instance(M, "i-1", 11, false);
        // a write about its pids path is still in flight (e.g. the removal of an old, empty pids node)
        String pidsPath = ViewFixture.LAYOUT.pids(M, key.instance());
        state.replay(new TermEvent.WriteIssued(new Intent(
                Intent.Kind.REMOVE_PIDS_NODE, key, null, List.of(new ZkWrite.Delete(pidsPath, 0)), Map.of(), "x")));
        assertThat(decide(T0).intents()).isEmpty();
    }

    @Test
    void addingsAreStampedWithTheEpochAndTheInstancesSession() {
        fx.instance(M, "i-1", 11, true);
        fx.instance(M, "i-2", 22, true);
        var adds = of(decide(T0), Intent.Kind.ADD);
        assertThat(adds).hasSize(4);
        for (Intent add : adds) {
            PidNode node = written(add);
            assertThat(node.state()).isEqualTo(PidState.ADDING);
            assertThat(node.epoch()).isEqualTo(E);
            assertThat(node.ownerSessionId())
                    .isEqualTo(add.holder().instance().value().equals("i-1") ? 11 : 22);
        }
        assertThat(adds)
                .extracting(Intent::holder)
                .filteredOn(h -> h.instance().value().equals("i-1"))
                .hasSize(2);
    }

    @Test
    void aWriteInFlightIsNotDecidedAgain() {
        fx.instance(M, "i-1", 11, true);
        var first = decide(T0);
        first.intents().forEach(i -> state.replay(new TermEvent.WriteIssued(i)));
        assertThat(decide(T0 + 1).intents()).isEmpty();
    }

    @Test
    void aDepartedInstancesPidsStayUntouchableForTheGracePeriod() {
        InstanceKey gone = fx.instance(M, "gone", 11, true);
        InstanceKey live = fx.instance(M, "live", 22, true);
        for (String p : List.of("p1", "p2")) {
            fx.pid(gone, p, PidState.ADDED, E, 11);
        }
        for (String p : List.of("p3", "p4")) {
            fx.pid(live, p, PidState.ADDED, E, 22);
        }
        fx.vanish(gone);
        assertThat(decide(T0).intents()).isEmpty(); // the leader sees it gone now: grace starts
        assertThat(decide(T0 + GRACE.toNanos() - 1).intents()).isEmpty();
        var released = decide(T0 + GRACE.toNanos());
        assertThat(of(released, Intent.Kind.REMOVE_NODE))
                .extracting(Intent::pid)
                .containsExactlyInAnyOrder("p1", "p2");
        assertThat(of(released, Intent.Kind.ADD)).isEmpty(); // delete first, add once the deletes are seen
        released.intents().forEach(i -> state.replay(new TermEvent.WriteIssued(i)));
        for (Intent remove : released.intents()) {
            state.replay(new TermEvent.WriteSettled(remove));
            fx.delete(remove.writes().get(0).path());
        }
        var adds = of(decide(T0 + GRACE.toNanos() + 1), Intent.Kind.ADD);
        assertThat(adds).extracting(Intent::pid).containsExactlyInAnyOrder("p1", "p2");
        assertThat(adds).allSatisfy(a -> assertThat(a.holder()).isEqualTo(live));
    }

    /**
     * The grace of an instance counts its callback deadline D: a login it began right before it
     * vanished may run until D before the SDK abandons it and logs out. The leader reads D from the
     * registration (the copy in the pids node, since the instance node is gone).
     */
    @Test
    void aDepartedInstancesGraceIncludesTheCallbackDeadlineItRegistered() {
        db = new DbFixture().module(M, 2, "p1", "p3").view();
        Duration deadline = Duration.ofSeconds(3);
        InstanceKey gone = fx.instance(M, "gone", 11, true, InstanceNode.registering(1, "h", deadline));
        InstanceKey live = fx.instance(M, "live", 22, true);
        fx.pid(gone, "p1", PidState.ADDED, E, 11);
        fx.pid(live, "p3", PidState.ADDED, E, 22);
        fx.vanish(gone);

        assertThat(decide(T0).intents()).isEmpty();
        assertThat(decide(T0 + GRACE.toNanos()).intents())
                .as("T/3 + L alone is not enough")
                .isEmpty();
        assertThat(decide(T0 + GRACE.plus(deadline).toNanos() - 1).intents()).isEmpty();
        var released = decide(T0 + GRACE.plus(deadline).toNanos());
        assertThat(of(released, Intent.Kind.REMOVE_NODE))
                .extracting(Intent::pid)
                .containsExactly("p1");
    }

    /**
     * The instance's deadline lengthens its grace, but the placement still runs while that grace
     * lasts: the PIDs a departed instance released are placed at once, and no placement fails.
     */
    @Test
    void aGracefulLeaveWithACallbackDeadlineIsPlacedAtOnce() {
        db = new DbFixture().module(M, 2, "p1", "p3").view();
        InstanceKey gone = fx.instance(M, "gone", 11, true, InstanceNode.registering(1, "h", Duration.ofSeconds(5)));
        InstanceKey live = fx.instance(M, "live", 22, true);
        String node = fx.pid(gone, "p1", PidState.DELETED, E, 11); // a graceful close answered DELETED
        fx.pid(live, "p3", PidState.ADDED, E, 22);
        fx.vanish(gone);

        var d = decide(T0);
        assertThat(d.alerts()).noneMatch(a -> a.contains("placement failed"));
        assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        fx.delete(node);
        var next = decide(T0 + 1);
        assertThat(next.alerts()).noneMatch(a -> a.contains("placement failed"));
        assertThat(of(next, Intent.Kind.ADD)).extracting(Intent::pid).containsExactly("p1");
    }

    @Test
    void theHandshakeKeepsACopyOfTheRegistrationInThePidsNode() {
        InstanceKey key = fx.instance(M, "i-1", 11, false, InstanceNode.registering(2, "h", Duration.ofSeconds(9)));
        var d = decide(T0);
        Intent handshake = of(d, Intent.Kind.HANDSHAKE).get(0);
        ZkWrite.Create pidsNode = (ZkWrite.Create) handshake.writes().get(0);
        assertThat(pidsNode.path()).isEqualTo(ViewFixture.LAYOUT.pids(M, key.instance()));
        assertThat(InstanceNode.decode(pidsNode.data()).callbackDeadlineMillis())
                .isEqualTo(9_000);
    }

    @Test
    void nothingIsAddedWhileANodeOfThePidMayStillBeHeld() {
        InstanceKey a = fx.instance(M, "i-1", 11, true);
        InstanceKey b = fx.instance(M, "i-2", 22, true);
        fx.pid(a, "p1", PidState.DELETING, E, 11); // a move under way, not yet answered
        fx.pid(a, "p2", PidState.ADDED, E, 11);
        var d = decide(T0);
        assertThat(of(d, Intent.Kind.ADD)).extracting(Intent::pid).doesNotContain("p1");
        fx.pid(a, "p1", PidState.DELETED, E, 11);
        state.replay(new TermEvent.RevokeSent(ViewFixture.LAYOUT.pid(M, a.instance(), "p1")));
        var removal = decide(T0 + 1);
        assertThat(of(removal, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(b).isNotNull();
    }

    @Test
    void anUnaskedDeletedMeansTheInstanceIsClosingAndGetsNothingNew() {
        InstanceKey closing = fx.instance(M, "i-1", 11, true);
        fx.pid(closing, "p1", PidState.DELETED, E, 11); // nobody sent DELETING: a goodbye
        var d = decide(T0);
        assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(of(d, Intent.Kind.ADD)).isEmpty();
        assertThat(state.draining(closing, T0, settings.ackTimeout().toNanos())).isTrue();
    }

    @Test
    void aFailedAddingIsRemovedCountedAndCooledDownAfterRepeatedFailures() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        long now = T0;
        for (int failure = 1; failure <= 3; failure++) {
            String path = fx.failedPid(key, "p1", E, 11);
            var d = decide(now);
            assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).contains("p1");
            assertThat(state.failures("p1")).isEqualTo(failure);
            assertThat(state.offerable("p1", now)).isFalse(); // retry backoff
            if (failure == 3) {
                assertThat(d.pidUpdates()).extracting(PidRecord::status).containsExactly(PidAvailability.COOLDOWN);
                assertThat(d.alerts()).anyMatch(a -> a.contains("cooldown"));
            } else {
                assertThat(d.pidUpdates()).isEmpty();
            }
            fx.delete(path);
            now += Duration.ofSeconds(2).toNanos();
        }
        assertThat(state.offerable("p1", now)).isFalse();
    }

    /**
     * After a suspension the SDK takes its ADDED nodes up again; when that onAssigned fails (refused,
     * or abandoned at the callback deadline and logged out) it answers with an error on the ADDED
     * node and holds nothing. The PID must move on like a failed ADDING, not stay with an instance
     * that does not hold it.
     */
    @Test
    void aFailedTakeUpAgainOfAnAddedNodeIsRemovedAndCountedLikeAFailedAdding() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        fx.raw(
                ViewFixture.LAYOUT.pid(M, key.instance(), "p1"),
                new PidNode("p1", PidState.ADDED, E, 11, DbFixture.payload("p1"), "onAssigned failed: refused")
                        .encode());
        var d = decide(T0);
        assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p1");
        assertThat(state.failures("p1")).isEqualTo(1);
    }

    @Test
    void unansweredInstructionsOfAnEarlierEpochAreReStamped() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        Epoch old = new Epoch(1);
        fx.pid(key, "p1", PidState.ADDING, old, 11);
        fx.pid(key, "p2", PidState.DELETING, old, 11);
        fx.pid(key, "p3", PidState.ADDED, old, 11); // answered: left alone
        var d = decide(T0);
        Intent adding = d.intents().stream()
                .filter(i -> "p1".equals(i.pid()))
                .findFirst()
                .orElseThrow();
        Intent deleting = d.intents().stream()
                .filter(i -> "p2".equals(i.pid()))
                .findFirst()
                .orElseThrow();
        assertThat(written(adding).state()).isEqualTo(PidState.ADDING);
        assertThat(written(adding).epoch()).isEqualTo(E);
        assertThat(adding.writes().get(0)).isInstanceOf(ZkWrite.SetData.class);
        assertThat(written(deleting).state()).isEqualTo(PidState.DELETING);
        assertThat(written(deleting).epoch()).isEqualTo(E);
        assertThat(d.intents()).noneMatch(i -> "p3".equals(i.pid()));
    }

    @Test
    void aMalformedNodeUnderALiveInstanceIsRevokedWithAWellFormedDeleting() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        String path = fx.raw(ViewFixture.LAYOUT.pid(M, key.instance(), "p1"), "junk".getBytes(StandardCharsets.UTF_8));
        var d = decide(T0);
        Intent repair = d.intents().stream()
                .filter(i -> "p1".equals(i.pid()))
                .findFirst()
                .orElseThrow();
        assertThat(repair.kind()).isEqualTo(Intent.Kind.REVOKE);
        PidNode node = written(repair);
        assertThat(node.state()).isEqualTo(PidState.DELETING);
        assertThat(node.ownerSessionId()).isEqualTo(11);
        assertThat(node.account()).isEqualTo(DbFixture.payload("p1"));
        assertThat(((ZkWrite.SetData) repair.writes().get(0)).version())
                .isEqualTo(fx.stat(path).version());
        assertThat(d.alerts()).anyMatch(a -> a.contains("unusable"));
        assertThat(of(d, Intent.Kind.ADD)).extracting(Intent::pid).doesNotContain("p1");
    }

    @Test
    void aChangedAccountIsSentAsUpdating() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        for (String p : List.of("p1", "p2", "p3", "p4")) {
            fx.pid(key, p, PidState.ADDED, E, 11);
        }
        PidRecord changed = new PidRecord(
                "p2",
                M,
                777,
                5,
                PidAvailability.ACTIVE,
                DbFixture.account(M, "p2").secret(),
                Map.of());
        db.replay(new DbChange.PidPut(changed));
        var updates = of(decide(T0), Intent.Kind.UPDATE);
        assertThat(updates).hasSize(1);
        PidNode node = written(updates.get(0));
        assertThat(node.state()).isEqualTo(PidState.UPDATING);
        assertThat(node.account().monthlyQuota()).isEqualTo(777);
        assertThat(node.account().overageAllowance()).isEqualTo(5);
    }

    @Test
    void assignmentRowsMirrorTheNodesStampedWithThisEpoch() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        fx.pid(key, "p1", PidState.ADDED, new Epoch(1), 11);
        var d = decide(T0);
        assertThat(d.rowUpserts())
                .containsExactly(new io.pidpool.core.model.Assignment("p1", M, key.instance(), PidState.ADDED, E, 11));
        state.replay(new TermEvent.RowsWritten(d.rowUpserts(), d.rowRemovals()));
        fx.delete(ViewFixture.LAYOUT.pid(M, key.instance(), "p1"));
        assertThat(decide(T0 + 1).rowRemovals()).containsExactly("p1");
    }

    @Test
    void anIncrementalPassLooksOnlyAtTheChangedPidsAndAFullOneAtEverything() {
        InstanceKey key = fx.instance(M, "i-1", 11, true);
        fx.instance(M, "i-2", 22, true);
        fx.pid(key, "p1", PidState.ADDED, new Epoch(2), 11);
        fx.pid(key, "p2", PidState.ADDING, new Epoch(2), 11);
        fx.pid(key, "p3", PidState.DELETED, new Epoch(2), 11);
        fx.pid(key, "p4", PidState.DELETED, new Epoch(2), 11);
        var onlyP3 = new Reconciler.Scope(false, java.util.Set.of("p3", "p1", "p2"), false);
        var d = reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), T0, onlyP3);
        // housekeeping of p3 only (p4 is as DELETED, but nobody said it changed), no placement
        assertThat(of(d, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactly("p3");
        assertThat(of(d, Intent.Kind.ADD)).isEmpty();
        // p2's ADDING row waits for the ack (or the next full pass): it is about to change again
        assertThat(d.rowUpserts())
                .extracting(io.pidpool.core.model.Assignment::pidId)
                .containsExactlyInAnyOrder("p1", "p3");
        // the full pass finds p4 too, and places
        var full = reconciler.decide(fx.view, db, state, policy, E, GRACE.toNanos(), T0, Reconciler.Scope.FULL);
        assertThat(of(full, Intent.Kind.REMOVE_NODE)).extracting(Intent::pid).containsExactlyInAnyOrder("p3", "p4");
        assertThat(full.rowUpserts())
                .extracting(io.pidpool.core.model.Assignment::pidId)
                .containsExactlyInAnyOrder("p1", "p2", "p3", "p4");
    }
}
