package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.PidClient;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.SdkIT;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** How the SDK reads and answers: coalesced acknowledgements, no re-read of its own writes. */
class PidClientWatchIT extends SdkIT {
    @Test
    void anAcknowledgementMultiOpWithOneStaleVersionStillAcknowledgesTheOthers() throws Exception {
        // callbacks on the state thread itself: the three answers become due in one burst and are
        // written in one multi-op
        PidClient client = harness.start(harness.builder(listener).callbackExecutor(Runnable::run));
        FakeLeader.Instance instance = harness.instanceOf(client);
        // the nodes exist before the client learns its pids path: its first listing reads them together
        leader.curator().create().forPath(instance.pidsPath());
        for (String pid : new String[] {"p1", "p2", "p3"}) {
            leader.add(instance, pid, FakeLeader.account("pw-" + pid, 100));
        }
        AtomicBoolean rewritten = new AtomicBoolean();
        listener.beforeAssign(account -> {
            if (account.id().equals("p2") && rewritten.compareAndSet(false, true)) {
                // the leader rewrites p2 while onAssigned runs: the answer's version is stale
                leader.write(instance, leader.read(instance, "p2").orElseThrow());
            }
        });
        harness.handshake(client);

        harness.awaitState(instance, "p1", PidState.ADDED);
        harness.awaitState(instance, "p3", PidState.ADDED);
        harness.awaitState(instance, "p2", PidState.ADDED);
        assertThat(rewritten).isTrue();
        assertThat(leader.version(instance, "p1")).isEqualTo(1); // one answer each
        assertThat(leader.version(instance, "p3")).isEqualTo(1);
        assertThat(leader.version(instance, "p2")).isEqualTo(2); // the rewrite, then the answer to it
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p2", "p3");
    }

    @Test
    void ownAnswersAreNotReadAgainButAForeignWriteToTheSameNodeIs() {
        PidClient client = harness.start(harness.builder(listener));
        DefaultPidClient internal = (DefaultPidClient) client;
        FakeLeader.Instance instance = harness.handshake(client);

        harness.addAndAwait(instance, "p1", "b1"); // settled: the first listing is long done
        long before = internal.nodesRead();

        // the client decides about b1's notification of its own ADDED before it reads b2's creation
        harness.addAndAwait(instance, "b2");
        assertThat(internal.nodesRead() - before).isEqualTo(1); // b2 as created; not our ADDED answers

        leader.update(instance, "p1", FakeLeader.account("pw-new", 200)); // a foreign write, same path
        harness.awaitState(instance, "p1", PidState.UPDATED);
        harness.addAndAwait(instance, "b3");
        assertThat(internal.nodesRead() - before).isEqualTo(3); // + p1 as updated + b3; not our UPDATED
        assertThat(leader.read(instance, "p1").map(PidNode::state)).contains(PidState.UPDATED);
    }

    @Test
    void aShareWrittenWhileTheClientStartsWatchingIsTakenUpWhole() throws Exception {
        // the listing travels right behind the watch (not after its reply): whatever the leader
        // creates around that moment is either listed or notified, never neither
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance instance = harness.instanceOf(client);
        leader.curator().create().forPath(instance.pidsPath());
        List<String> pids = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            pids.add("r" + i);
        }
        for (String pid : pids.subList(0, 20)) {
            leader.add(instance, pid, FakeLeader.account("pw-" + pid, 100));
        }
        CompletableFuture<Void> rest = CompletableFuture.runAsync(() -> {
            for (String pid : pids.subList(20, pids.size())) {
                leader.add(instance, pid, FakeLeader.account("pw-" + pid, 100));
            }
        });
        harness.handshake(client);
        rest.join();
        for (String pid : pids) {
            harness.awaitState(instance, pid, PidState.ADDED);
        }
        assertThat(client.heldPids()).containsExactlyInAnyOrderElementsOf(pids);
    }
}
