package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidListener;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A throwing {@code onRevoked} is not a logout: the PID is no longer used, but the client does not
 * answer DELETED (which frees the PID at once); it reports the failure in the node (DELETING +
 * error), and on close it leaves the node as it is, so the leader frees the PID only after the grace
 * period. The real {@link ListenerInvoker} turns the listener's exception into the outcome.
 */
class FailedLogoutTest {
    static final long S = 0x5eed;
    static final String ROOT = "/modules/fin#risk#scorer/box-5eed-pids";

    final PidListener failingLogout = new PidListener() {
        @Override
        public void onAssigned(PidAccount account) {}

        @Override
        public void onRevoked(PidAccount account) {
            throw new IllegalStateException("platform logout timed out");
        }
    };
    final ListenerInvoker invoker =
            new ListenerInvoker(failingLogout, (keyId, ciphertext) -> new String(ciphertext, StandardCharsets.UTF_8));
    final PidTracker tracker = new PidTracker();
    long zxid = 1000;
    int version;

    @BeforeEach
    void hold() {
        tracker.resetSession(S);
        tracker.resume();
        PidNode adding = PidNode.instruction("p1", PidState.ADDING, new Epoch(1), S, payload());
        Action.Assign assign = (Action.Assign) only(tracker.onNode(view(adding)));
        Action.Write ack = (Action.Write)
                only(tracker.onCallbackDone("p1", invoker.assign(assign.view().node())));
        assertThat(tracker.onWriteDone(ack, PidTracker.WriteResult.OK, view(ack.node())))
                .isEmpty();
        assertThat(tracker.heldIds()).containsExactly("p1");
    }

    @Test
    void aFailedLogoutAnswersDeletingWithTheErrorInsteadOfDeleted() {
        PidNode deleting = PidNode.instruction("p1", PidState.DELETING, new Epoch(1), S, payload());
        Action.Revoke revoke = (Action.Revoke) only(tracker.onNode(view(deleting)));

        Outcome outcome = invoker.revoke(revoke.account(), revoke.why());
        Action.Write answer = (Action.Write) only(tracker.onCallbackDone("p1", outcome));

        assertThat(tracker.heldIds()).isEmpty(); // not used any more, whatever happened at the platform
        assertThat(answer.node().state()).isEqualTo(PidState.DELETING);
        assertThat(answer.node().error()).contains("onRevoked failed", "platform logout timed out");
        // the report landed: nothing more to say until the leader acts
        assertThat(tracker.onWriteDone(answer, PidTracker.WriteResult.OK, view(answer.node())))
                .isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void aFailedLogoutOnCloseLeavesTheNodeForTheGracePeriodInsteadOfAnsweringDeleted() {
        Action.Revoke revoke = (Action.Revoke) only(tracker.close());

        List<Action> after = tracker.onCallbackDone("p1", invoker.revoke(revoke.account(), revoke.why()));

        assertThat(after).isEmpty();
        assertThat(tracker.isQuiescent()).isTrue();
    }

    @Test
    void aFailedLogoutOnSuspensionIsReportedWhenTheLeaderWithdrawsThePidMeanwhile() {
        Action.Revoke revoke = (Action.Revoke) only(tracker.suspend());
        assertThat(tracker.onCallbackDone("p1", invoker.revoke(revoke.account(), revoke.why())))
                .isEmpty();
        PidNode deleting = PidNode.instruction("p1", PidState.DELETING, new Epoch(1), S, payload());
        assertThat(tracker.onNode(view(deleting))).isEmpty(); // not granting: nothing to do yet

        Action.Write answer = (Action.Write) only(tracker.resume());

        assertThat(answer.node().state()).isEqualTo(PidState.DELETING);
        assertThat(answer.node().error()).contains("onRevoked failed");
    }

    NodeView view(PidNode node) {
        return NodeView.of(tracker.generation(), ROOT + "/" + node.pidId(), node, version++, ++zxid);
    }

    static Action only(List<Action> actions) {
        assertThat(actions).hasSize(1);
        return actions.get(0);
    }

    static AccountPayload payload() {
        return new AccountPayload(100, 0, new SealedSecret("k1", "pw".getBytes(StandardCharsets.UTF_8)), Map.of());
    }
}
