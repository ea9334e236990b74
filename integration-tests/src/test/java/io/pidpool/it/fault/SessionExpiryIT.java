package io.pidpool.it.fault;

import static io.pidpool.it.fault.FaultWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger.End;
import io.pidpool.it.platform.PlatformLedger.Login;
import io.pidpool.it.zk.ZooKeepers;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The ZooKeeper server ends a client's session on its own (what it does when a session times out):
 * the ephemeral node goes at once, the client must stop, come back as a new instance, and every PID
 * must be held again, never twice.
 */
class SessionExpiryIT extends SingleZooKeeperFaults {

    @Test
    void aSessionExpiredByTheServerRevokesReRegistersAndEveryPidIsHeldAgain() {
        world = new FaultWorld(zookeeper.getConnectString(), "session-expiry");
        Set<String> ofA = world.twoClientsSharing(zookeeper.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess.Registered before = a.registration().orElseThrow();
        Duration t = world.checkGrace(a);
        long grace = world.leader().grace().toNanos();

        long expiredAt = System.nanoTime(); // a lower bound for the node's deletion
        assertThat(ZooKeepers.terminateSession(before.sessionId()))
                .as("the server knows session %x", before.sessionId())
                .isTrue();
        await("A's instance node gone").atMost(WAIT).until(() -> !world.probe().exists(world.instancePath(before)));
        await("A logged out of " + ofA).atMost(WAIT).until(() -> world.platformHeldBy("A", ofA)
                .isEmpty());
        ClientProcess.Registered after =
                a.awaitRegistration(r -> r.sessionId() != before.sessionId() && r.handshakeDone(), WAIT);
        Map<String, String> holders = world.awaitAllHeld(PIDS, WAIT);

        long lastLogout = Long.MIN_VALUE;
        long firstMove = Long.MAX_VALUE;
        for (String pid : ofA) {
            List<Login> logins = world.ledger().logins(pid);
            // A, then the next holder; a third login is the rebalance that gives A's new instance
            // its share back when it re-registered after the grace (A -> B -> A): also correct
            assertThat(logins).hasSizeBetween(2, 3);
            Login old = logins.get(0);
            Login next = logins.get(1);
            assertThat(old.client()).isEqualTo("A");
            assertThat(old.end()).isEqualTo(End.LOGGED_OUT);
            assertThat(old.endNanos()).isLessThan(next.loginNanos());
            assertThat(next.loginNanos() - expiredAt).isGreaterThan(grace);
            if (logins.size() == 3) {
                assertThat(next.client()).isNotEqualTo("A");
                assertThat(next.end()).isEqualTo(End.LOGGED_OUT);
                assertThat(logins.get(2).client()).isEqualTo("A");
                assertThat(next.endNanos()).isLessThan(logins.get(2).loginNanos());
            }
            lastLogout = Math.max(lastLogout, old.endNanos());
            firstMove = Math.min(firstMove, next.loginNanos());
        }
        // who gets them depends on whether A re-registered before the grace ran out: either is fine
        assertThat(after.instanceId()).isNotEqualTo(before.instanceId()).startsWith("A-");
        world.assertSafety();

        world.timing("T (negotiated)", t.toNanos());
        world.timing("server closes session -> A's last logout (revoke latency)", lastLogout - expiredAt);
        world.timing("server closes session -> A registered again", after.atNanos() - expiredAt);
        world.timing("server closes session -> first re-login", firstMove - expiredAt);
        world.note("holders afterwards", holders.toString());
    }
}
