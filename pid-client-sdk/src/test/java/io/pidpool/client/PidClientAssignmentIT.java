package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.MODULE;
import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.RecordingListener.Kind;
import io.pidpool.client.testing.SdkIT;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The SDK against real ZooKeeper and a fake leader: registration, instructions and answers. */
class PidClientAssignmentIT extends SdkIT {
    @Test
    void registersUnderASessionDerivedIdAndFollowsTheHandshake() {
        PidClient client =
                harness.start(harness.builder(listener).weight(3).callbackDeadline(Duration.ofMillis(7_500)));

        assertThat(client.state()).isEqualTo(PidClient.State.REGISTERED);
        Registration registration = client.registration().orElseThrow();
        assertThat(registration.instanceId()).isEqualTo("box-" + Long.toHexString(registration.sessionId()));
        assertThat(registration.sessionTimeout()).isEqualTo(Duration.ofSeconds(4)); // negotiated, read back
        assertThat(registration.handshakeDone()).isFalse();

        FakeLeader.Instance instance = harness.instanceOf(client);
        assertThat(instance.ownerSessionId()).isEqualTo(registration.sessionId()); // EPHEMERAL of that session
        assertThat(leader.instanceData(instance))
                .contains(InstanceNode.registering(3, "test-host", Duration.ofMillis(7_500))); // D reported

        harness.handshake(client);
        assertThat(client.registration().orElseThrow().pidsPath()).isEqualTo(instance.pidsPath());
        assertThat(client.heldPids()).isEmpty();
    }

    @Test
    void assignsAcknowledgesAfterTheListenerReturnedAndHolds() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);
        // listener before ack: while onAssigned runs, the node must still say ADDING
        listener.beforeAssign(
                account -> assertThat(leader.state(instance, account.id())).contains(PidState.ADDING));

        leader.add(instance, "p1", FakeLeader.account("pw-p1", 100, Map.of("region", "eu")));
        harness.addAndAwait(instance, "p2", "p3");
        harness.awaitState(instance, "p1", PidState.ADDED);

        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p2", "p3");
        PidAccount p1 = listener.heldAccount("p1");
        assertThat(p1.secret()).isEqualTo("pw-p1"); // opened
        assertThat(p1.monthlyQuota()).isEqualTo(100);
        assertThat(p1.attributes()).containsEntry("region", "eu");
        PidNode node = leader.read(instance, "p1").orElseThrow();
        assertThat(node.ownerSessionId()).isEqualTo(instance.ownerSessionId());
        assertThat(node.epoch()).isEqualTo(leader.epoch());
        assertThat(node.hasError()).isFalse();
        assertThat(leader.version(instance, "p1")).isEqualTo(1); // exactly one answer
    }

    @Test
    void aThrowingOnAssignedIsReportedInTheNodeAndThePidIsNotHeld() {
        listener.failOn("p2");
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);

        leader.add(instance, "p2", FakeLeader.account("pw", 100));
        harness.addAndAwait(instance, "p1", "p3");
        await().atMost(WAIT)
                .until(() -> leader.read(instance, "p2").map(PidNode::hasError).orElse(false));

        PidNode failed = leader.read(instance, "p2").orElseThrow();
        assertThat(failed.state()).isEqualTo(PidState.ADDING); // state unchanged, error set
        assertThat(failed.error()).contains("IllegalStateException", "login refused for p2");
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p3");
        assertThat(listener.kinds("p2")).containsExactly(Kind.ASSIGN_FAILED);

        // the leader withdraws it and tries again later: now it works
        leader.remove(instance, "p2");
        listener.stopFailingOn("p2");
        harness.addAndAwait(instance, "p2");
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p2", "p3");
    }

    @Test
    void aSecretThatCannotBeOpenedFailsTheAssignmentWithoutCallingTheListener() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);

        PidNode.AccountPayload foreignKey = new PidNode.AccountPayload(
                100, 0, new SealedSecret("other-key", "x".getBytes(StandardCharsets.UTF_8)), Map.of());
        leader.add(instance, "p1", foreignKey);
        await().atMost(WAIT)
                .until(() -> leader.read(instance, "p1").map(PidNode::hasError).orElse(false));

        assertThat(leader.read(instance, "p1").orElseThrow().error())
                .startsWith("cannot open secret")
                .contains("unknown key id other-key");
        assertThat(listener.events()).isEmpty();
        assertThat(client.heldPids()).isEmpty();
    }

    @Test
    void updatingAndDeletingCallTheListenerThenAnswer() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1");

        leader.update(instance, "p1", FakeLeader.account("pw-new", 999));
        harness.awaitState(instance, "p1", PidState.UPDATED);
        RecordingListener.Event updated = listener.events().get(1);
        assertThat(updated.kind()).isEqualTo(Kind.UPDATED);
        assertThat(updated.before().monthlyQuota()).isEqualTo(100);
        assertThat(updated.before().secret()).isEqualTo("pw-p1");
        assertThat(updated.account().monthlyQuota()).isEqualTo(999);
        assertThat(updated.account().secret()).isEqualTo("pw-new");
        assertThat(client.heldPids()).containsExactly("p1");

        leader.delete(instance, "p1");
        harness.awaitState(instance, "p1", PidState.DELETED);
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.UPDATED, Kind.REVOKED);
        assertThat(client.heldPids()).isEmpty();

        leader.remove(instance, "p1"); // the leader deletes the node after DELETED: nothing happens
        harness.addAndAwait(instance, "p2");
        assertThat(listener.kinds("p1")).hasSize(3);
    }

    @Test
    void nodesForAnotherSessionOrAnOlderEpochAreIgnored() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);
        Epoch old = leader.epoch();
        Epoch current = leader.bumpEpoch();
        harness.addAndAwait(instance, "p1"); // the client has now seen the current epoch

        long session = instance.ownerSessionId();
        PidNode.AccountPayload account = FakeLeader.account("pw", 100);
        leader.write(instance, PidNode.instruction("p2", PidState.ADDING, current, session + 1, account));
        leader.write(instance, PidNode.instruction("p3", PidState.ADDING, old, session, account));
        leader.write(instance, PidNode.instruction("p1", PidState.DELETING, old, session, account));
        // barriers: once these are answered, the three writes above have been seen (and ignored)
        harness.addAndAwait(instance, "b1");
        harness.addAndAwait(instance, "b2");

        assertThat(leader.read(instance, "p2").orElseThrow())
                .isEqualTo(PidNode.instruction("p2", PidState.ADDING, current, session + 1, account));
        assertThat(leader.read(instance, "p3").orElseThrow())
                .isEqualTo(PidNode.instruction("p3", PidState.ADDING, old, session, account));
        assertThat(leader.state(instance, "p1")).contains(PidState.DELETING); // unanswered
        assertThat(listener.kinds("p2")).isEmpty();
        assertThat(listener.kinds("p3")).isEmpty();
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "b1", "b2");

        // the same instruction from the current epoch is obeyed
        leader.delete(instance, "p1");
        harness.awaitState(instance, "p1", PidState.DELETED);
        assertThat(client.heldPids()).containsExactlyInAnyOrder("b1", "b2");
    }

    @Test
    void malformedNodeDataIsReportedAndHurtsNothingElse() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1");

        leader.writeRaw(instance, "bad", "not a pid node".getBytes(StandardCharsets.UTF_8));
        harness.addAndAwait(instance, "p2");
        await().atMost(WAIT).until(() -> leader.readRaw(instance, "bad")
                .map(bytes -> bytes[0] == 'P')
                .orElse(false));
        PidNode report = leader.read(instance, "bad").orElseThrow();
        assertThat(report.error()).startsWith("malformed node data");
        assertThat(report.ownerSessionId()).isEqualTo(instance.ownerSessionId());

        // garbage over a held PID: revoked (we cannot tell what the leader wants), then reported
        leader.writeRaw(instance, "p1", new byte[] {'P', 1, 0});
        await().atMost(WAIT).until(() -> leader.readRaw(instance, "p1")
                .map(bytes -> bytes.length > 3)
                .orElse(false));
        assertThat(leader.read(instance, "p1").orElseThrow().error()).startsWith("malformed node data");
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);

        harness.addAndAwait(instance, "p3");
        assertThat(client.state()).isEqualTo(PidClient.State.REGISTERED);
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p2", "p3");
    }

    @Test
    void aDeletingThatArrivesDuringOnAssignedWaitsForItAndNeverOverlaps() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        listener.beforeAssign(account -> {
            if (account.id().equals("p1")) {
                started.countDown();
            }
        });
        CountDownLatch gate = listener.blockAssign("p1");
        PidClient client = harness.start(harness.builder(listener).callbackDeadline(Duration.ofSeconds(60)));
        FakeLeader.Instance instance = harness.handshake(client);

        leader.add(instance, "p1", FakeLeader.account("pw", 100));
        assertThat(started.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
                .isTrue();
        leader.delete(instance, "p1"); // withdrawn while onAssigned is still logging in
        harness.addAndAwait(instance, "b1"); // other PIDs go on meanwhile
        harness.addAndAwait(instance, "b2");

        assertThat(leader.state(instance, "p1")).contains(PidState.DELETING);
        assertThat(listener.kinds("p1")).isEmpty();
        assertThat(client.heldPids()).containsExactlyInAnyOrder("b1", "b2");

        gate.countDown();
        harness.awaitState(instance, "p1", PidState.DELETED);
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);
        assertThat(client.heldPids()).containsExactlyInAnyOrder("b1", "b2");
    }

    @Test
    void closeRevokesAnswersDeletedAndRemovesTheInstanceNode() {
        listener.failOn("p3");
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1", "p2");
        leader.add(instance, "p3", FakeLeader.account("pw", 100));
        await().atMost(WAIT)
                .until(() -> leader.read(instance, "p3").map(PidNode::hasError).orElse(false));
        // DELETED may be written only after onRevoked returned
        listener.beforeRevoke(account ->
                assertThat(leader.state(instance, account.id())).isNotEqualTo(Optional.of(PidState.DELETED)));

        client.close();

        assertThat(client.state()).isEqualTo(PidClient.State.CLOSED);
        assertThat(client.heldPids()).isEmpty();
        assertThat(client.registration()).isEmpty();
        for (String pid : List.of("p1", "p2", "p3")) {
            assertThat(leader.state(instance, pid)).as(pid).contains(PidState.DELETED);
        }
        assertThat(leader.exists(instance.path())).isFalse();
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);
        assertThat(listener.kinds("p2")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);
        assertThat(listener.held()).isEmpty();
    }

    @Test
    void startGivesUpAfterItsTimeoutWhenZooKeeperIsUnreachable() {
        BlackHoleProxy proxy = harness.proxy();
        proxy.blackHole();
        PidClient client = harness.builder(listener)
                .connectString(proxy.connectString())
                .startTimeout(Duration.ofMillis(1500))
                .build();

        long started = System.nanoTime();
        assertThatThrownBy(client::start).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                .isEqualTo(ErrorCode.UNAVAILABLE));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
        assertThat(client.state()).isEqualTo(PidClient.State.CLOSED);
        assertThat(leader.instances(MODULE)).isEmpty();
    }

    /**
     * A login that hangs past the callback deadline D: its thread is interrupted, the PID is not held,
     * {@code onRevoked} undoes the login, and the failure is reported to the leader (the failed
     * ADDING), while other PIDs are unaffected.
     */
    @Test
    void aLoginThatOverrunsTheCallbackDeadlineIsAbandonedLoggedOutAndReported() {
        Duration deadline = Duration.ofMillis(500);
        List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch never = new CountDownLatch(1);
        PidListener hanging = new PidListener() {
            @Override
            public void onAssigned(PidAccount account) throws Exception {
                calls.add("assign " + account.id());
                if (account.id().equals("slow")) {
                    try {
                        never.await();
                    } catch (InterruptedException e) {
                        calls.add("interrupted " + account.id());
                        throw e;
                    }
                }
            }

            @Override
            public void onRevoked(PidAccount account) {
                calls.add("revoke " + account.id());
            }
        };
        PidClient client = harness.start(harness.builder(hanging).callbackDeadline(deadline));
        FakeLeader.Instance instance = harness.handshake(client);

        leader.add(instance, "slow", FakeLeader.account("pw", 100));
        await().atMost(WAIT)
                .until(() ->
                        leader.read(instance, "slow").map(PidNode::hasError).orElse(false));

        PidNode reported = leader.read(instance, "slow").orElseThrow();
        assertThat(reported.state()).isEqualTo(PidState.ADDING);
        assertThat(reported.error()).contains("did not return within the callback deadline of 500 ms");
        assertThat(calls).contains("assign slow", "interrupted slow", "revoke slow");
        assertThat(client.heldPids()).doesNotContain("slow");
        harness.addAndAwait(instance, "fast");
        assertThat(client.heldPids()).containsExactly("fast");
    }
}
