package io.pidpool.it.fault;

import static io.pidpool.it.fault.FaultWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger.End;
import io.pidpool.it.platform.PlatformLedger.Kind;
import io.pidpool.it.platform.PlatformLedger.Login;
import io.pidpool.it.zk.ZkProbe.Vanish;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A client cut off from ZooKeeper by a black hole (no byte passes, nothing is closed) while it can
 * still reach the platform: it must log out before anyone else logs in with its PIDs.
 */
class PartitionIT extends SingleZooKeeperFaults {
    private BlackHoleProxy proxy;

    @AfterEach
    void tearDown() {
        closeWorld(); // before the proxy: the clients leave through it
        if (proxy != null) {
            proxy.close();
        }
    }

    @Test
    void aPartitionedClientLogsOutBeforeAnyoneElseLogsInWithItsPids() {
        world = new FaultWorld(zookeeper.getConnectString(), "partition-blackhole");
        proxy = BlackHoleProxy.to(zookeeper.getPort());
        Set<String> ofA = world.twoClientsSharing(proxy.connectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess b = world.process("B").orElseThrow();
        ClientProcess.Registered before = a.registration().orElseThrow();
        Duration t = world.checkGrace(a);
        long grace = world.leader().grace().toNanos();

        long cut = System.nanoTime();
        proxy.blackHole();
        // the server hears nothing from A and expires its session; the leader then moves after G
        Vanish vanish = world.probe().awaitGone(world.instancePath(before), t.multipliedBy(3));
        world.awaitPlatformHolder("B", ofA, WAIT);

        long lastLogout = Long.MIN_VALUE;
        long firstMove = Long.MAX_VALUE;
        for (String pid : ofA) {
            Login old = world.ledger().logins(pid, "A").get(0);
            Login next = world.ledger().logins(pid, "B").get(0);
            assertThat(old.end()).as("A logged out of %s itself", pid).isEqualTo(End.LOGGED_OUT);
            assertThat(old.endNanos())
                    .as("A logged out of %s before anyone else logged in", pid)
                    .isLessThan(next.loginNanos());
            // stronger: before the server even expired A's session (lease 2T/3 - T/10 < T)
            assertThat(old.endNanos())
                    .as("A logged out of %s before its ephemeral node vanished", pid)
                    .isLessThan(vanish.lastSeenSentNanos());
            assertThat(next.loginNanos() - vanish.lastSeenSentNanos())
                    .as(
                            "%s moved %d ms after A's ephemeral node vanished; grace is %d ms",
                            pid, (next.loginNanos() - vanish.lastSeenSentNanos()) / 1_000_000, grace / 1_000_000)
                    .isGreaterThan(grace);
            lastLogout = Math.max(lastLogout, old.endNanos());
            firstMove = Math.min(firstMove, next.loginNanos());
        }
        assertThat(lastLogout - cut).as("revoke latency").isLessThan(t.toNanos());
        b.awaitHeld(Set.copyOf(PIDS), WAIT);

        long healed = System.nanoTime();
        proxy.restore();
        // the old session is gone for good: A comes back as a new instance and gets nothing back
        ClientProcess.Registered after =
                a.awaitRegistration(r -> r.sessionId() != before.sessionId() && r.handshakeDone(), WAIT);
        assertThat(after.instanceId()).isNotEqualTo(before.instanceId());
        assertThat(a.held()).isEmpty();
        assertThat(world.ledger()
                        .events(e -> e.kind() == Kind.LOGIN && e.client().equals("A")))
                .as("A logged in to nothing after the partition")
                .hasSize(ofA.size());
        world.assertSafety();

        world.timing("T (negotiated)", t.toNanos());
        world.timing("black hole -> A's last logout (revoke latency)", lastLogout - cut);
        world.timing("black hole -> ephemeral node gone (firstGone)", vanish.firstGoneNanos() - cut);
        world.timing("A's last logout -> first login by B", firstMove - lastLogout);
        world.timing("heal -> A registered again (new session)", after.atNanos() - healed);
    }
}
