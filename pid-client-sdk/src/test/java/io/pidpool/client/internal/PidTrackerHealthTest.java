package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidAccount;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.HealthReport;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Login-failure and login-conflict reports: how they travel in the PID node's writes. */
class PidTrackerHealthTest {
    private static final long S = 0x5eed;
    private static final String ROOT = "/modules/fin#risk#scorer/box-5eed-pids";
    private static final HealthReport FAILURE = HealthReport.loginFailure("password expired");
    private static final HealthReport CONFLICT = HealthReport.loginConflict("logged in elsewhere");

    private PidTracker tracker;
    private long zxid = 1000;
    private final Map<String, Integer> versions = new HashMap<>();

    @BeforeEach
    void startSession() {
        tracker = new PidTracker();
        tracker.resetSession(S);
        tracker.resume();
    }

    private static PidNode adding(String pid) {
        return PidNode.instruction(
                pid,
                PidState.ADDING,
                new Epoch(1),
                S,
                new AccountPayload(100, 0, new SealedSecret("k1", "pw".getBytes(StandardCharsets.UTF_8)), Map.of()));
    }

    private List<Action> observe(PidNode node) {
        return tracker.onNode(view(node));
    }

    private NodeView view(PidNode node) {
        int version = versions.merge(node.pidId(), 1, Integer::sum) - 1;
        return NodeView.of(tracker.generation(), ROOT + "/" + node.pidId(), node, version, ++zxid);
    }

    private List<Action> land(Action.Write w) {
        return tracker.onWriteDone(w, PidTracker.WriteResult.OK, view(w.node()));
    }

    private static Action.Write onlyWrite(List<Action> actions) {
        assertThat(actions).hasSize(1).first().isInstanceOf(Action.Write.class);
        return (Action.Write) actions.get(0);
    }

    private PidNode hold(String pid) {
        assertThat(observe(adding(pid))).singleElement().isInstanceOf(Action.Assign.class);
        Action.Write ack = onlyWrite(
                tracker.onCallbackDone(pid, new Outcome.Assigned(new PidAccount(pid, "pw", 100, 0, Map.of()))));
        assertThat(land(ack)).isEmpty();
        return ack.node();
    }

    @Test
    void aReportAboutAHeldPidIsWrittenIntoItsNodeVersionedAndTheHoldStaysUntilTheLeaderWithdrawsIt() {
        PidNode added = hold("p1");

        Action.Write w = onlyWrite(tracker.report("p1", FAILURE));

        assertThat(w.node()).isEqualTo(added.withReport(FAILURE));
        assertThat(w.expectedVersion()).isEqualTo(1); // against the ADDED it read
        assertThat(land(w)).isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1"); // until DELETING: the leader decides
        assertThat(tracker.isQuiescent()).isTrue();

        PidNode deleting = PidNode.instruction("p1", PidState.DELETING, new Epoch(1), S, added.account());
        assertThat(observe(deleting)).singleElement().isInstanceOf(Action.Revoke.class);
        assertThat(tracker.heldIds()).isEmpty();
        Action.Write deleted = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(deleted.node().state()).isEqualTo(PidState.DELETED);
        assertThat(deleted.node().hasReport()).as("delivered already").isFalse();
    }

    @Test
    void aReportFromInsideOnAssignedGoesWithTheAnswerWhetherItReturnsOrThrows() {
        observe(adding("p1"));
        assertThat(tracker.report("p1", CONFLICT)).as("waits for the callback").isEmpty();
        Action.Write ack = onlyWrite(
                tracker.onCallbackDone("p1", new Outcome.Assigned(new PidAccount("p1", "pw", 100, 0, Map.of()))));
        assertThat(ack.node().state()).isEqualTo(PidState.ADDED);
        assertThat(ack.node().report()).isEqualTo(CONFLICT);

        observe(adding("p2"));
        assertThat(tracker.report("p2", FAILURE)).isEmpty();
        Action.Write failed = onlyWrite(tracker.onCallbackDone("p2", new Outcome.Failed("login refused")));
        assertThat(failed.node().state()).isEqualTo(PidState.ADDING);
        assertThat(failed.node().error()).isEqualTo("login refused");
        assertThat(failed.node().report()).isEqualTo(FAILURE);
    }

    @Test
    void aReportForAPidOfAnotherSessionOrNoneIsRefused() {
        assertThat(tracker.report("nope", FAILURE)).isNull();
        PidNode foreign = PidNode.instruction(
                "p9", PidState.ADDING, new Epoch(1), S + 1, adding("p9").account());
        assertThat(observe(foreign)).isEmpty();
        assertThat(tracker.report("p9", FAILURE)).isNull();
    }

    @Test
    void aRefusedWriteKeepsTheReportForTheNextAnswer() {
        PidNode added = hold("p1");
        Action.Write w = onlyWrite(tracker.report("p1", FAILURE));
        // the leader wrote DELETING meanwhile (rebalance): BadVersion, then the newer content
        assertThat(tracker.onWriteDone(w, PidTracker.WriteResult.BAD_VERSION, null))
                .isEmpty();
        PidNode deleting = PidNode.instruction("p1", PidState.DELETING, new Epoch(1), S, added.account());
        assertThat(observe(deleting)).singleElement().isInstanceOf(Action.Revoke.class);
        Action.Write deleted = onlyWrite(tracker.onCallbackDone("p1", new Outcome.Revoked()));
        assertThat(deleted.node().state()).isEqualTo(PidState.DELETED);
        assertThat(deleted.node().report()).as("the leader still learns of it").isEqualTo(FAILURE);
    }

    @Test
    void ourOwnReportedAnswerIsNotTakenUpAgainAfterASuspension() {
        PidNode added = hold("p1");
        land(onlyWrite(tracker.report("p1", FAILURE)));
        assertThat(tracker.suspend()).singleElement().isInstanceOf(Action.Revoke.class);
        tracker.onCallbackDone("p1", new Outcome.Revoked());

        assertThat(tracker.resume()).isEmpty();
        assertThat(tracker.heldIds()).isEmpty();
        assertThat(added.hasReport()).isFalse();
    }
}
