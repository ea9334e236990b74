package io.pidpool.it.fault;

import static io.pidpool.it.fault.FaultWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger.End;
import io.pidpool.it.platform.PlatformLedger.Login;
import io.pidpool.it.zk.ZkProbe.Vanish;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A client JVM dies (SIGKILL) or leaves (graceful close) while holding PIDs: its PIDs move to the
 * survivor, after the grace period for a crash and at once for a close, and never overlap.
 */
class ClientCrashIT extends SingleZooKeeperFaults {

    @Test
    void aKilledClientsPidsMoveOnlyAfterItsEphemeralNodeVanishedPlusGrace() {
        world = new FaultWorld(zookeeper.getConnectString(), "crash-sigkill");
        Set<String> ofA = world.twoClientsSharing(zookeeper.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess b = world.process("B").orElseThrow();
        ClientProcess.Registered registration = a.registration().orElseThrow();
        Duration t = world.checkGrace(a);
        // the leader's grace for this instance counts the callback deadline it registered (the
        // SDK's default: the client process sets none)
        long grace = world.leader().grace().toNanos() + InstanceNode.DEFAULT_CALLBACK_DEADLINE.toNanos();

        long killedAt = a.kill();
        Vanish vanish = world.probe().awaitGone(world.instancePath(registration), t.multipliedBy(3));
        world.awaitPlatformHolder("B", ofA, WAIT);

        for (String pid : ofA) {
            Login old = world.ledger().logins(pid, "A").get(0);
            Login next = world.ledger().logins(pid, "B").get(0);
            // the dead process's login ended with its connection, not by a second login
            assertThat(old.end()).isEqualTo(End.DISCONNECTED);
            assertThat(old.endNanos()).isLessThan(next.loginNanos());
            // never earlier: the node was still there for a request sent at lastSeenSent, and the
            // leader waits G after it saw the node gone
            assertThat(next.loginNanos() - vanish.lastSeenSentNanos())
                    .as(
                            "%s moved %d ms after the ephemeral node vanished; grace is %d ms",
                            pid, (next.loginNanos() - vanish.lastSeenSentNanos()) / 1_000_000, grace / 1_000_000)
                    .isGreaterThan(grace);
            // and not much later (liveness): one leader tick, an ADDING write and a login
            assertThat(next.loginNanos() - vanish.firstGoneNanos())
                    .isLessThan(grace + Duration.ofSeconds(3).toNanos());
        }
        b.awaitHeld(Set.copyOf(PIDS), WAIT);
        world.assertSafety();

        long firstMove = ofA.stream()
                .mapToLong(pid -> world.ledger().logins(pid, "B").get(0).loginNanos())
                .min()
                .orElseThrow();
        world.timing("T (negotiated)", t.toNanos());
        world.timing("G (leader grace + callback deadline)", grace);
        world.timing("SIGKILL -> ephemeral node gone (firstGone)", vanish.firstGoneNanos() - killedAt);
        world.timing("ephemeral node gone (lastSeen) -> first login by B", firstMove - vanish.lastSeenSentNanos());
        world.timing("SIGKILL -> first login by B", firstMove - killedAt);
    }

    @Test
    void aGracefullyClosedClientsPidsMoveAtOnceWithoutOverlap() {
        world = new FaultWorld(zookeeper.getConnectString(), "crash-close");
        Set<String> ofA = world.twoClientsSharing(zookeeper.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        long grace = world.leader().grace().toNanos();

        long closing = System.nanoTime();
        a.closeGracefully(WAIT);
        world.awaitPlatformHolder("B", ofA, WAIT);

        for (String pid : ofA) {
            Login old = world.ledger().logins(pid, "A").get(0);
            Login next = world.ledger().logins(pid, "B").get(0);
            assertThat(old.end()).isEqualTo(End.LOGGED_OUT);
            assertThat(old.endNanos()).isLessThan(next.loginNanos());
            // DELETED answers free a PID without the grace period
            assertThat(next.loginNanos() - closing).isLessThan(grace);
        }
        world.assertSafety();
        long lastMove = ofA.stream()
                .mapToLong(pid -> world.ledger().logins(pid, "B").get(0).loginNanos())
                .max()
                .orElseThrow();
        world.timing("close() -> last login by B", lastMove - closing);
    }
}
