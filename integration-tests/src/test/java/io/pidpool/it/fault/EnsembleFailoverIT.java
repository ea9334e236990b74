package io.pidpool.it.fault;

import static io.pidpool.it.fault.FaultWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger.Login;
import io.pidpool.it.zk.ZooKeepers;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A three-server ZooKeeper ensemble loses its leader server (and gets it back): every client is
 * disconnected while the survivors elect a new leader. Nothing may be held twice meanwhile, and every
 * PID must be held again afterwards.
 */
class EnsembleFailoverIT {
    private static final List<String> PIDS = List.of("p1", "p2", "p3", "p4");
    private static TestingCluster ensemble;
    private FaultWorld world;

    @BeforeAll
    static void startEnsemble() {
        ensemble = ZooKeepers.ensemble(3);
    }

    @AfterAll
    static void stopEnsemble() throws IOException {
        ensemble.close();
    }

    @AfterEach
    void tearDown() {
        if (world != null) {
            world.close();
        }
    }

    @Test
    void killingAndRestartingTheZooKeeperLeaderServerNeverDoubleHoldsAndEveryPidIsHeldAgain() {
        world = new FaultWorld(ensemble.getConnectString(), "ensemble-leader-killed");
        world.twoClientsSharing(ensemble.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess b = world.process("B").orElseThrow();
        Duration t = world.checkGrace(a);
        InstanceSpec zkLeader = ZooKeepers.ensembleLeader(ensemble).orElseThrow();

        long killedAt = System.nanoTime();
        ZooKeepers.kill(ensemble, zkLeader);
        // every server drops its clients while a new leader is elected: both clients must notice
        await("both clients suspended")
                .atMost(WAIT)
                .until(() -> suspendedSince(a, killedAt) && suspendedSince(b, killedAt));
        long suspendedAt = System.nanoTime();
        world.awaitAllHeld(PIDS, WAIT);
        long heldAgainAt = System.nanoTime();

        ZooKeepers.restart(ensemble, zkLeader);
        await("server " + zkLeader.getServerId() + " serving again")
                .atMost(WAIT)
                .until(() -> ZooKeepers.srvr(zkLeader.getPort()).contains("Mode: "));
        world.awaitAllHeld(PIDS, WAIT);

        for (String pid : PIDS) {
            List<Login> logins = world.ledger().logins(pid);
            assertThat(logins).as("%s was logged out and in again", pid).hasSizeGreaterThanOrEqualTo(2);
            for (int i = 1; i < logins.size(); i++) {
                assertThat(logins.get(i - 1).endNanos())
                        .isLessThan(logins.get(i).loginNanos());
            }
        }
        world.assertSafety();
        world.timing("T (negotiated)", t.toNanos());
        world.timing("kill ZooKeeper leader -> both clients suspended (observed)", suspendedAt - killedAt);
        world.timing("kill ZooKeeper leader -> every PID held again", heldAgainAt - killedAt);
        world.note("A kept its session", Boolean.toString(sameSession(a)));
        world.note("B kept its session", Boolean.toString(sameSession(b)));
    }

    private static boolean suspendedSince(ClientProcess client, long since) {
        return client.lines("STATE", "SUSPENDED").stream().anyMatch(l -> l.atNanos() > since);
    }

    private static boolean sameSession(ClientProcess client) {
        return client.lines("REGISTERED", null).stream()
                        .map(l -> l.argument().split(" ")[1])
                        .distinct()
                        .count()
                == 1;
    }
}
