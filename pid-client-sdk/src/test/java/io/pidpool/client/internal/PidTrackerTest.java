package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidAccount;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The SDK's protocol rules, one observation at a time, without ZooKeeper. */
class PidTrackerTest {
    private static final long S = 0x5eed;
    private static final String ROOT = "/modules/fin#risk#scorer/box-5eed-pids";

    private PidTracker tracker;
    private long zxid = 1000;
    /** The ZooKeeper version of every node, as a fake store would keep it. */
    private final Map<String, Integer> versions = new HashMap<>();

    @BeforeEach
    void startSession() {
        tracker = new PidTracker();
        assertThat(tracker.resetSession(S)).isEmpty();
        assertThat(tracker.resume()).isEmpty();
    }

    // ------------------------------------------------------------ helpers

    private static AccountPayload payload(String password, long quota) {
        return new AccountPayload(
                quota, 0, new SealedSecret("k1", password.getBytes(StandardCharsets.UTF_8)), Map.of());
    }

    private static PidNode instruction(String pid, PidState state, long epoch, AccountPayload account) {
        return PidNode.instruction(pid, state, new Epoch(epoch), S, account);
    }

    private static PidAccount account(String pid) {
        return new PidAccount(pid, "pw", 100, 0, Map.of());
    }

    /** The leader (or anyone) writes {@code node}: a new version with a new zxid. */
    private List<Action> observe(PidNode node) {
        return tracker.onNode(view(node));
    }

    private NodeView view(PidNode node) {
        int version = versions.merge(node.pidId(), 1, Integer::sum) - 1;
        return NodeView.of(tracker.generation(), ROOT + "/" + node.pidId(), node, version, ++zxid);
    }

    /** The write lands: the node gets the written content as its next version. */
    private List<Action> land(Action.Write w) {
        return tracker.onWriteDone(w, PidTracker.WriteResult.OK, view(w.node()));
    }

    private static Action only(List<Action> actions) {
        assertThat(actions).hasSize(1);
        return actions.get(0);
    }

    private static Action.Write onlyWrite(List<Action> actions) {
        assertThat(only(actions)).isInstanceOf(Action.Write.class);
        return (Action.Write) actions.get(0);
    }

    /** ADDING → onAssigned → ADDED landed: the PID is held. */
    private PidNode hold(String pid) {
        PidNode adding = instruction(pid, PidState.ADDING, 1, payload("pw", 100));
        assertThat(only(observe(adding))).isInstanceOf(Action.Assign.class);
        Action.Write ack = onlyWrite(tracker.onCallbackDone(pid, new Outcome.Assigned(account(pid))));
        assertThat(land(ack)).isEmpty();
        return ack.node();
    }

    // ------------------------------------------------------------ handshake and acks

    @Test
    void addingCallsOnAssignedAndAcksAddedOnlyAfterItReturned() {
        PidNode adding = instruction("p1", PidState.ADDING, 1, payload("pw", 100));

        Action first = only(observe(adding));
        assertThat(first).isInstanceOf(Action.Assign.class);
        assertThat(((Action.Assign) first).view().node()).isEqualTo(adding);
        assertThat(tracker.heldIds()).isEmpty(); // not held while onAssigned runs

        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(ack.node()).isEqualTo(adding.acknowledged());
        assertThat(ack.node().state()).isEqualTo(PidState.ADDED);
        assertThat(ack.expectedVersion()).isZero(); // versioned against the ADDING it read
        assertThat(tracker.heldIds()).containsExactly("p1");

        assertThat(land(ack)).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void throwingOnAssignedIsReportedInTheNodeAndThePidIsNotHeld() {
        PidNode adding = instruction("p1", PidState.ADDING, 1, payload("pw", 100));
        observe(adding);

        Action.Write report = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Failed("login refused")));

        assertThat(report.node().state()).isEqualTo(PidState.ADDING);
        assertThat(report.node().error()).isEqualTo("login refused");
        assertThat(report.expectedVersion()).isZero();
        assertThat(tracker.heldIds()).isEmpty();
        assertThat(land(report)).isEmpty(); // our own report: nothing more to do
        // the leader removes the node; nothing happens, the entry is forgotten
        assertThat(tracker.onNodeDeleted(tracker.generation(), "p1")).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void updatingCallsOnUpdatedWithBeforeAndAfterThenAcksUpdated() {
        hold("p1");
        PidNode updating = instruction("p1", PidState.UPDATING, 1, payload("pw2", 999));

        Action.Update update = (Action.Update) only(observe(updating));
        assertThat(update.before()).isEqualTo(account("p1"));
        assertThat(update.view().node()).isEqualTo(updating);

        PidAccount after = new PidAccount("p1", "pw2", 999, 0, Map.of());
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Updated(after)));
        assertThat(ack.node().state()).isEqualTo(PidState.UPDATED);
        assertThat(tracker.heldIds()).containsExactly("p1");

        // the same content again (e.g. re-sent by a new leader): no callback, just the answer
        assertThat(land(ack)).isEmpty();
        Action.Write again = onlyWrite(observe(instruction("p1", PidState.UPDATING, 1, payload("pw2", 999))));
        assertThat(again.node().state()).isEqualTo(PidState.UPDATED);
    }

    @Test
    void throwingOnUpdatedIsReportedAndTheOldAccountStaysHeld() {
        hold("p1");
        observe(instruction("p1", PidState.UPDATING, 1, payload("pw2", 999)));

        Action.Write report = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Failed("onUpdated failed: boom")));

        assertThat(report.node().state()).isEqualTo(PidState.UPDATING);
        assertThat(report.node().error()).contains("boom");
        assertThat(tracker.heldIds()).containsExactly("p1");
        assertThat(land(report)).isEmpty(); // no retry loop on our own report
    }

    @Test
    void deletingRevokesAndAcksDeletedOnlyAfterOnRevokedReturned() {
        hold("p1");

        Action.Revoke revoke =
                (Action.Revoke) only(observe(instruction("p1", PidState.DELETING, 1, payload("pw", 100))));
        assertThat(revoke.account()).isEqualTo(account("p1"));
        assertThat(tracker.heldIds()).isEmpty(); // out of heldPids as soon as the revocation is decided

        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(ack.node().state()).isEqualTo(PidState.DELETED);
    }

    @Test
    void deletingForAPidThatIsNotHeldIsAcknowledgedWithoutCallback() {
        Action.Write ack = onlyWrite(observe(instruction("p1", PidState.DELETING, 1, payload("pw", 100))));
        assertThat(ack.node().state()).isEqualTo(PidState.DELETED);
    }

    // ------------------------------------------------------------ one thing at a time per PID

    @Test
    void anInstructionArrivingWhileOnAssignedRunsWaitsAndWinsOverTheAck() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        // the leader withdraws the PID while onAssigned is still logging in
        assertThat(observe(instruction("p1", PidState.DELETING, 1, payload("pw", 100))))
                .isEmpty();

        // onAssigned returns: revoke at once (never ack ADDED for a node that says DELETING)
        Action.Revoke revoke = (Action.Revoke) only(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(revoke.pid()).isEqualTo("p1");
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(ack.node().state()).isEqualTo(PidState.DELETED);
        assertThat(ack.expectedVersion()).isEqualTo(1); // the DELETING version
    }

    @Test
    void noAssignWhileARevocationRuns() {
        hold("p1");
        assertThat(tracker.suspend()).singleElement().isInstanceOf(Action.Revoke.class);
        // resumed while onRevoked is still running: nothing until it returned
        assertThat(tracker.resume()).isEmpty();
        assertThat(only(tracker.onCallbackDone("p1", new Outcome.Revoked()))).isInstanceOf(Action.Assign.class);
    }

    @Test
    void aWriteInFlightDefersTheNextStep() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        // DELETING lands before our ack's reply arrives
        assertThat(observe(instruction("p1", PidState.DELETING, 1, payload("pw", 100))))
                .isEmpty();
        // our ack failed with BadVersion: act on the newer content
        assertThat(only(tracker.onWriteDone(ack, PidTracker.WriteResult.BAD_VERSION, null)))
                .isInstanceOf(Action.Revoke.class);
    }

    @Test
    void badVersionWaitsForTheNewerContentInsteadOfRetryingTheSameWrite() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));

        assertThat(tracker.onWriteDone(ack, PidTracker.WriteResult.BAD_VERSION, null))
                .isEmpty();

        // the re-read brings the newer content (here: ADDING re-stamped by a new epoch): answer that one
        Action.Write again = onlyWrite(observe(instruction("p1", PidState.ADDING, 2, payload("pw", 100))));
        assertThat(again.node().state()).isEqualTo(PidState.ADDED);
        assertThat(again.node().epoch()).isEqualTo(new Epoch(2));
    }

    @Test
    void olderObservationsOfANodeAreDropped() {
        PidNode adding = instruction("p1", PidState.ADDING, 1, payload("pw", 100));
        NodeView newer = NodeView.of(tracker.generation(), ROOT + "/p1", adding, 3, 2000);
        NodeView older = NodeView.of(tracker.generation(), ROOT + "/p1", adding, 2, 1999);
        assertThat(tracker.onNode(newer)).hasSize(1);
        tracker.onCallbackDone("p1", new Outcome.Failed("x"));
        assertThat(tracker.onNode(older)).isEmpty();
    }

    // ------------------------------------------------------------ fencing

    @Test
    void nodesForAnotherSessionAreIgnored() {
        PidNode foreign = PidNode.instruction("p1", PidState.ADDING, new Epoch(1), S + 1, payload("pw", 100));
        assertThat(observe(foreign)).isEmpty();
        assertThat(tracker.heldIds()).isEmpty();
    }

    @Test
    void instructionsOlderThanTheHighestEpochSeenAreIgnored() {
        hold("p1"); // epoch 1
        assertThat(only(observe(instruction("p2", PidState.ADDING, 3, payload("pw", 100)))))
                .isInstanceOf(Action.Assign.class);
        assertThat(tracker.highestEpoch()).isEqualTo(new Epoch(3));

        assertThat(observe(instruction("p3", PidState.ADDING, 2, payload("pw", 100))))
                .isEmpty();
        // a deposed leader's DELETING for a held PID changes nothing either
        assertThat(observe(instruction("p1", PidState.DELETING, 2, payload("pw", 100))))
                .isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1");
        // the current leader's does
        assertThat(only(observe(instruction("p1", PidState.DELETING, 3, payload("pw", 100)))))
                .isInstanceOf(Action.Revoke.class);
    }

    @Test
    void aHeldNodeThatChangesOwnerIsRevoked() {
        PidNode added = hold("p1");
        PidNode stolen = new PidNode("p1", PidState.ADDED, added.epoch(), S + 7, added.account(), "");
        assertThat(only(observe(stolen))).isInstanceOf(Action.Revoke.class);
    }

    @Test
    void aHeldNodeThatDisappearsIsRevoked() {
        hold("p1");
        assertThat(only(tracker.onNodeDeleted(tracker.generation(), "p1"))).isInstanceOf(Action.Revoke.class);
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    // ------------------------------------------------------------ suspend / resume / new session

    @Test
    void suspendRevokesEverythingAndResumeTakesHeldNodesUpAgainWithoutNewAcks() {
        hold("p1");
        hold("p2");

        List<Action> revokes = tracker.suspend();
        assertThat(revokes).hasSize(2).allMatch(a -> a instanceof Action.Revoke);
        assertThat(tracker.heldIds()).isEmpty();
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty(); // no DELETED: not asked
        assertThat(tracker.onCallbackDone("p2", new Outcome.Revoked())).isEmpty();

        List<Action> takeUp = tracker.resume();
        assertThat(takeUp).hasSize(2).allMatch(a -> a instanceof Action.Assign);
        assertThat(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))))
                .isEmpty(); // already ADDED
        assertThat(tracker.onCallbackDone("p2", new Outcome.Assigned(account("p2"))))
                .isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1", "p2");
    }

    @Test
    void suspendRevokesAPidWhoseAckIsStillInFlightWithoutWaitingForItsReply() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(tracker.heldIds()).containsExactly("p1");

        // a partition right after the ack was sent: its reply may come only once the session is gone
        assertThat(only(tracker.suspend())).isInstanceOf(Action.Revoke.class);
        assertThat(tracker.heldIds()).isEmpty();

        // the ack landed after all (the reply was late) while onRevoked ran; nothing more to do
        assertThat(land(ack)).isEmpty();
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
        // same session alive again: our own ADDED is taken up without a new answer
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);
        assertThat(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))))
                .isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1");
    }

    @Test
    void closeRevokesAPidWhoseAckIsStillInFlightAndAnswersDeletedOnceTheAckSettled() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));

        assertThat(only(tracker.close())).isInstanceOf(Action.Revoke.class);
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty(); // the ack is still out
        Action.Write deleted = onlyWrite(land(ack));
        assertThat(deleted.node().state()).isEqualTo(PidState.DELETED);
        assertThat(land(deleted)).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void nothingIsAssignedWhileSuspended() {
        tracker.suspend();
        assertThat(observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100))))
                .isEmpty();
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);
    }

    @Test
    void aCallThatCouldNotStartWaitsForTheNextResume() {
        hold("p1");
        tracker.suspend();
        tracker.onCallbackDone("p1", new Outcome.Revoked());
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);

        // its thread found the lease invalid: nothing until granting is confirmed again
        assertThat(tracker.onCallbackDone("p1", new Outcome.NotStarted())).isEmpty();
        tracker.suspend();
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);
    }

    @Test
    void aCallThatCouldNotStartIsDecidedAgainWhenAResumeCameWhileItWasInFlight() {
        // a process pause: the take-up is decided, its thread wakes with the lease expired, then the
        // state thread suspends and resumes (the session is alive) before the thread's answer arrives
        hold("p1");
        tracker.suspend();
        tracker.onCallbackDone("p1", new Outcome.Revoked());
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);
        assertThat(tracker.suspend()).isEmpty();
        assertThat(tracker.resume()).isEmpty(); // the call is still in flight

        // that resume is the one the call waited for: decide again at once, not after a resume to come
        assertThat(only(tracker.onCallbackDone("p1", new Outcome.NotStarted()))).isInstanceOf(Action.Assign.class);
    }

    @Test
    void aFailedTakeUpIsReportedOnTheAddedNode() {
        hold("p1");
        tracker.suspend();
        tracker.onCallbackDone("p1", new Outcome.Revoked());
        tracker.resume();

        Action.Write report = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Failed("login refused")));
        assertThat(report.node().state()).isEqualTo(PidState.ADDED);
        assertThat(report.node().error()).isEqualTo("login refused");
        assertThat(land(report)).isEmpty();
        assertThat(tracker.heldIds()).isEmpty();
    }

    @Test
    void aNewSessionRevokesEverythingAndIgnoresTheOldSessionsNodes() {
        hold("p1");
        long oldGeneration = tracker.generation();

        assertThat(only(tracker.resetSession(S + 1))).isInstanceOf(Action.Revoke.class);
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty();
        tracker.resume();

        PidNode late = instruction("p9", PidState.ADDING, 1, payload("pw", 100));
        assertThat(tracker.onNode(NodeView.of(oldGeneration, ROOT + "/p9", late, 0, ++zxid)))
                .isEmpty();
        // the old session's ADDED node, seen again, is not ours any more
        assertThat(tracker.onNode(NodeView.of(
                        tracker.generation(),
                        "/modules/x#y#z/box-5eee-pids/p1",
                        instruction("p1", PidState.ADDING, 1, payload("pw", 1)).acknowledged(),
                        1,
                        ++zxid)))
                .isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void anOnAssignedThatReturnsAfterTheSessionEndedIsRevokedAtOnce() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        tracker.resetSession(0);
        Action.Revoke revoke = (Action.Revoke) only(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(revoke.account()).isEqualTo(account("p1"));
        assertThat(tracker.onCallbackDone("p1", new Outcome.Revoked())).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    // ------------------------------------------------------------ malformed data

    @Test
    void unreadableNodeIsReportedAndOthersAreUnaffected() {
        NodeView garbage = NodeView.read(tracker.generation(), ROOT + "/bad", new byte[] {1, 2, 3}, 0, ++zxid);
        assertThat(garbage.isMalformed()).isTrue();

        Action.Write report = onlyWrite(tracker.onNode(garbage));
        assertThat(report.node().pidId()).isEqualTo("bad");
        assertThat(report.node().error()).startsWith("malformed node data");
        assertThat(report.node().ownerSessionId()).isEqualTo(S);
        assertThat(report.expectedVersion()).isZero();

        assertThat(only(observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)))))
                .isInstanceOf(Action.Assign.class);
    }

    @Test
    void aHeldNodeThatBecomesUnreadableIsRevokedThenReported() {
        hold("p1");
        NodeView garbage = NodeView.read(
                tracker.generation(), ROOT + "/p1", "nonsense".getBytes(StandardCharsets.UTF_8), 5, ++zxid);

        assertThat(only(tracker.onNode(garbage))).isInstanceOf(Action.Revoke.class);
        Action.Write report = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(report.node().error()).startsWith("malformed node data");
    }

    @Test
    void aNodeWhosePidDiffersFromItsNameIsMalformed() {
        PidNode other = instruction("p2", PidState.ADDING, 1, payload("pw", 100));
        NodeView view = NodeView.read(tracker.generation(), ROOT + "/p1", other.encode(), 0, ++zxid);
        assertThat(view.malformed()).contains("differs from the node name");
    }

    // ------------------------------------------------------------ close

    @Test
    void closeRevokesThenAnswersDeletedForEveryNodeOfTheSession() {
        hold("p1");
        observe(instruction("p2", PidState.ADDING, 1, payload("pw", 100)));
        land(onlyWrite(tracker.onCallbackDone("p2", new Outcome.Failed("refused"))));
        observe(PidNode.instruction("p3", PidState.ADDING, new Epoch(1), S + 1, payload("pw", 100)));

        List<Action> closing = tracker.close();
        assertThat(closing).hasSize(2);
        assertThat(closing.get(0)).isInstanceOfAny(Action.Revoke.class, Action.Write.class);
        Action.Revoke revoke = (Action.Revoke) closing.stream()
                .filter(a -> a instanceof Action.Revoke)
                .findFirst()
                .orElseThrow();
        Action.Write p2 = (Action.Write) closing.stream()
                .filter(a -> a instanceof Action.Write)
                .findFirst()
                .orElseThrow();
        assertThat(revoke.pid()).isEqualTo("p1");
        assertThat(p2.pid()).isEqualTo("p2");
        assertThat(p2.node().state()).isEqualTo(PidState.DELETED);
        assertThat(tracker.isQuiescent()).isFalse();

        Action.Write p1 = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(p1.node().state()).isEqualTo(PidState.DELETED);
        assertThat(land(p1)).isEmpty();
        assertThat(land(p2)).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue(); // p3 belongs to another session: not ours to answer
    }

    @Test
    void closeGivesUpOnANodeAfterBoundedFailedWrites() {
        hold("p1");
        tracker.close();
        Action.Write write = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        for (int i = 1; i < PidTracker.MAX_CLOSE_WRITES; i++) {
            write = onlyWrite(tracker.onWriteDone(write, PidTracker.WriteResult.FAILED, null));
        }
        assertThat(tracker.onWriteDone(write, PidTracker.WriteResult.FAILED, null))
                .isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void aFailedWriteOutsideCloseWaitsForTheNextResume() {
        observe(instruction("p1", PidState.ADDING, 1, payload("pw", 100)));
        Action.Write ack = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(tracker.onWriteDone(ack, PidTracker.WriteResult.FAILED, null))
                .isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1"); // held: the leader sees ADDING, i.e. "may hold"

        // connection trouble: suspend, then resume re-takes and answers again
        assertThat(only(tracker.suspend())).isInstanceOf(Action.Revoke.class);
        tracker.onCallbackDone("p1", new Outcome.Revoked());
        assertThat(only(tracker.resume())).isInstanceOf(Action.Assign.class);
        Action.Write again = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Assigned(account("p1"))));
        assertThat(again.node().state()).isEqualTo(PidState.ADDED);
    }
}
