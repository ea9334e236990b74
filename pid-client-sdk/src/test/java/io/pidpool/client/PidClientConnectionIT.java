package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.MODULE;
import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.FakeLeader;
import io.pidpool.client.testing.PlatformSdkIT;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.RecordingListener.Kind;
import io.pidpool.core.model.PidState;
import io.pidpool.core.testing.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Exclusive hold under faults: a partition (black-holed proxy), session expiry, a deleted instance
 * node and a process pause, against real ZooKeeper.
 */
class PidClientConnectionIT extends PlatformSdkIT {
    private static final Logger log = LoggerFactory.getLogger(PidClientConnectionIT.class);

    @Test
    void aPartitionRevokesWithinTheLeaseAndTheSameSessionTakesThePidsUpAgain() {
        BlackHoleProxy proxy = harness.proxy();
        PidClient client = harness.start(harness.builder(listener).connectString(proxy.connectString()));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1", "p2");
        Registration before = client.registration().orElseThrow();
        Duration t = before.sessionTimeout();
        int answered = leader.version(instance, "p1");

        proxy.blackHole();
        long cut = System.nanoTime();
        await().atMost(t).until(() -> listener.held().isEmpty()); // onRevoked returned for both
        Duration revokedAfter = Duration.ofNanos(System.nanoTime() - cut);
        log.info("partition: both PIDs revoked {} ms after the cut (T = {} ms)", revokedAfter.toMillis(), t.toMillis());
        assertThat(client.heldPids()).isEmpty();
        assertThat(client.state()).isEqualTo(PidClient.State.SUSPENDED);
        // the server cannot expire the session before T after the last contact: we were faster
        assertThat(revokedAfter).isLessThan(t);

        proxy.restore();
        long healed = System.nanoTime();
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2")));
        log.info("partition: PIDs held again {} ms after it healed", (System.nanoTime() - healed) / 1_000_000);

        Registration after = client.registration().orElseThrow();
        assertThat(after.instanceId()).isEqualTo(before.instanceId());
        assertThat(after.sessionId()).isEqualTo(before.sessionId());
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED, Kind.ASSIGNED);
        assertThat(listener.kinds("p2")).containsExactly(Kind.ASSIGNED, Kind.REVOKED, Kind.ASSIGNED);
        assertThat(leader.version(instance, "p1")).isEqualTo(answered); // taken up without a new answer
        assertThat(leader.instances(MODULE)).containsExactly(before.instanceId());
    }

    @Test
    void anExpiredSessionRegistersAgainAsANewInstanceAndNeverOverlapsTheNextHolder() {
        BlackHoleProxy proxy = harness.proxy();
        PidClient a = harness.start(
                harness.builder(listener).connectString(proxy.connectString()).sessionTimeout(Duration.ofSeconds(2)));
        RecordingListener listenerB = new RecordingListener("B", platform);
        PidClient b = harness.start(harness.builder(listenerB).instanceId("other"));
        FakeLeader.Instance oldA = harness.handshake(a);
        FakeLeader.Instance instanceB = harness.handshake(b);
        harness.addAndAwait(oldA, "p1");

        proxy.blackHole();
        long cut = System.nanoTime();
        // the server expires A's session; a leader may then move the PID (here: at once, no grace)
        await().atMost(WAIT).until(() -> !leader.exists(oldA.path()));
        assertThat(listener.held()).isEmpty(); // A logged out long before
        log.info(
                "expiry: the server dropped A's instance node {} ms after the cut",
                (System.nanoTime() - cut) / 1_000_000);
        harness.addAndAwait(instanceB, "p1");
        assertThat(platform.holder("p1")).isEqualTo("B");

        proxy.restore();
        await().atMost(WAIT).until(() -> a.registration()
                .map(r -> !r.instanceId().equals(oldA.id().value()))
                .orElse(false));
        Registration fresh = a.registration().orElseThrow();
        assertThat(fresh.sessionId()).isNotEqualTo(oldA.ownerSessionId());
        assertThat(fresh.instanceId()).isEqualTo("box-" + Long.toHexString(fresh.sessionId()));

        FakeLeader.Instance newA = harness.handshake(a);
        harness.addAndAwait(newA, "p2");
        assertThat(a.heldPids()).containsExactly("p2"); // the old registration's p1 stays gone
        assertThat(leader.state(oldA, "p1")).contains(PidState.ADDED); // untouched: another session's node
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);
        assertThat(b.heldPids()).containsExactly("p1");
        assertThat(listenerB.violations()).isEmpty();
    }

    @Test
    void aDeletedInstanceNodeRevokesEverythingAndStartsANewSession() {
        PidClient client = harness.start(harness.builder(listener));
        FakeLeader.Instance old = harness.handshake(client);
        harness.addAndAwait(old, "p1");

        leader.deleteInstanceNode(old);

        await().atMost(WAIT).until(() -> client.registration()
                .map(r -> r.sessionId() != old.ownerSessionId())
                .orElse(false));
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED);
        assertThat(client.heldPids()).isEmpty();
        FakeLeader.Instance fresh = harness.handshake(client);
        assertThat(fresh.id()).isNotEqualTo(old.id());
        harness.addAndAwait(fresh, "p9");
        assertThat(client.heldPids()).containsExactly("p9");
    }

    @Test
    void aLongPauseRevokesAtOnceAndAFreshReplyTakesThePidsUpAgain() {
        ManualTicker ticker = new ManualTicker();
        PidClient client = harness.start(harness.builder(listener).ticker(ticker::read));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1", "p2");
        Registration before = client.registration().orElseThrow();
        assertThat(client.heldPids()).containsExactlyInAnyOrder("p1", "p2");

        // the process "was stopped" for 3/4 T: beyond the pause budget (T/3) and the lease (2T/3 - T/10)
        ticker.advance(before.sessionTimeout().multipliedBy(3).dividedBy(4));

        assertThat(client.heldPids()).isEmpty(); // the lease check fails on the spot
        await().atMost(WAIT).until(() -> listener.count(Kind.REVOKED) == 2); // the pause detector revoked
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2"))); // fresh heartbeat
        assertThat(listener.kinds("p1")).containsExactly(Kind.ASSIGNED, Kind.REVOKED, Kind.ASSIGNED);
        assertThat(client.registration().orElseThrow().sessionId()).isEqualTo(before.sessionId());
    }

    /**
     * Every callback thread is taken by a login that hangs (four blocked {@code onAssigned}, the
     * default pool's size): the revocation of a PID already held must not queue behind them. The bound:
     * with every assignment thread blocked, {@code onRevoked} starts one state-thread hop after the
     * client decided to revoke (here: the lease lapses about 0.62T after the last reply), so the hold
     * ends before T after the cut, as for an idle client.
     */
    @Test
    void aRevocationDoesNotWaitBehindLoginsThatHang() {
        BlackHoleProxy proxy = harness.proxy();
        // a deadline far away: the hanging logins are not abandoned while the test watches p1
        PidClient client = harness.start(harness.builder(listener)
                .connectString(proxy.connectString())
                .callbackDeadline(Duration.ofSeconds(60)));
        FakeLeader.Instance instance = harness.handshake(client);
        harness.addAndAwait(instance, "p1");
        Duration t = client.registration().orElseThrow().sessionTimeout();
        List<String> slow = List.of("p2", "p3", "p4", "p5");
        Set<String> started = ConcurrentHashMap.newKeySet();
        List<CountDownLatch> gates = new ArrayList<>();
        slow.forEach(pid -> gates.add(listener.blockAssign(pid)));
        listener.beforeAssign(account -> started.add(account.id()));
        try {
            slow.forEach(pid -> leader.add(instance, pid, FakeLeader.account("pw-" + pid, 100)));
            await().atMost(WAIT).until(() -> started.containsAll(slow)); // every callback thread is busy

            proxy.blackHole();
            long cut = System.nanoTime();
            await().atMost(t).until(() -> !listener.held().contains("p1"));
            log.info(
                    "blocked logins: p1 revoked {} ms after the cut (T = {} ms)",
                    (System.nanoTime() - cut) / 1_000_000,
                    t.toMillis());
            assertThat(client.heldPids()).isEmpty();
        } finally {
            gates.forEach(CountDownLatch::countDown);
        }
    }
}
