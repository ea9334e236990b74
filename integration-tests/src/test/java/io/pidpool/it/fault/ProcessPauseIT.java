package io.pidpool.it.fault;

import static io.pidpool.it.fault.FaultWorld.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.platform.PlatformLedger.Answer;
import io.pidpool.it.platform.PlatformLedger.DoubleLogin;
import io.pidpool.it.platform.PlatformLedger.End;
import io.pidpool.it.platform.PlatformLedger.Event;
import io.pidpool.it.platform.PlatformLedger.Kind;
import io.pidpool.it.platform.PlatformLedger.Login;
import io.pidpool.it.zk.ZkProbe.Vanish;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A client JVM frozen with SIGSTOP (every thread stops at once, sockets stay open, nothing is
 * noticed inside): shorter than T/3 nothing may move; longer than T the session expires and the PIDs
 * move, and once thawed the client must revoke before it uses or takes anything.
 */
class ProcessPauseIT extends SingleZooKeeperFaults {

    @Test
    void aPauseShorterThanAThirdOfTMovesNothingAndTheClientKeepsItsPids() throws InterruptedException {
        world = new FaultWorld(zookeeper.getConnectString(), "pause-short");
        Set<String> ofA = world.twoClientsSharing(zookeeper.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess.Registered before = a.registration().orElseThrow();
        Duration t = world.checkGrace(a);
        Duration freeze = t.dividedBy(8); // well below the T/3 pause budget, with room for a loaded machine
        long grace = world.leader().grace().toNanos();

        long stoppedAt = a.stop();
        TimeUnit.NANOSECONDS.sleep(freeze.toNanos()); // the pause itself: the one fixed wait
        long thawedAt = a.cont();

        // had the pause cost A its session, its PIDs would have moved by stop + T + G: watch A keep
        // using every PID, on its first login, until well past that point
        long horizon = stoppedAt + t.toNanos() + grace + Duration.ofMillis(500).toNanos();
        await("A keeps acting on its PIDs past stop + T + G")
                .atMost(WAIT)
                .pollInterval(Duration.ofMillis(50))
                .until(() -> ofA.stream().allMatch(pid -> !world.ledger()
                        .events(e -> e.kind() == Kind.ACTION
                                && e.client().equals("A")
                                && e.account().equals(pid)
                                && e.nanos() > horizon
                                && e.answer() == Answer.OK)
                        .isEmpty()));

        for (String pid : PIDS) {
            List<Login> logins = world.ledger().logins(pid);
            assertThat(logins).as("nobody logged in to %s again", pid).hasSize(1);
            assertThat(logins.get(0).isOpen()).isTrue();
        }
        assertThat(a.lines("REVOKED", null)).as("A revoked nothing").isEmpty();
        assertThat(a.lines("STATE", "SUSPENDED")).as("A was never suspended").isEmpty();
        assertThat(a.registration().orElseThrow().sessionId()).isEqualTo(before.sessionId());
        world.assertSafety();
        world.timing("T (negotiated)", t.toNanos());
        world.timing("SIGSTOP .. SIGCONT (pause)", thawedAt - stoppedAt);
    }

    @Test
    void afterAPauseLongerThanTTheClientRevokesBeforeItUsesOrTakesAnything() {
        world = new FaultWorld(zookeeper.getConnectString(), "pause-long");
        Set<String> ofA = world.twoClientsSharing(zookeeper.getConnectString(), PIDS);
        ClientProcess a = world.process("A").orElseThrow();
        ClientProcess.Registered before = a.registration().orElseThrow();
        Duration t = world.checkGrace(a);
        long grace = world.leader().grace().toNanos();
        List<Login> firstLoginsOfA =
                ofA.stream().map(pid -> world.ledger().logins(pid, "A").get(0)).toList();

        long stoppedAt = a.stop();
        // frozen until the server expired A's session and the leader moved its PIDs to B
        Vanish vanish = world.probe().awaitGone(world.instancePath(before), t.multipliedBy(3));
        world.awaitPlatformHolder("B", ofA, WAIT);
        long thawedAt = a.cont();

        await("A reports every PID revoked").atMost(WAIT).until(() -> ofA.stream()
                .allMatch(pid -> !a.lines("REVOKED", pid).isEmpty()));
        ClientProcess.Registered after =
                a.awaitRegistration(r -> r.sessionId() != before.sessionId() && r.handshakeDone(), WAIT);
        // something new to grant. The fake leader gives p5 to the emptiest instance, A's new one; the
        // real leader also rebalances B's PIDs onto A's new instance (via DELETING at B first)
        world.addPids("p5");
        List<String> all = new java.util.ArrayList<>(PIDS);
        all.add("p5");
        await("A's new instance holds a share").atMost(WAIT).until(() -> !world.platformHeldBy("A", all)
                .isEmpty());
        world.awaitAllHeld(all, WAIT);

        // 1. the frozen client's logins were superseded by B's, and that is the only double login
        List<DoubleLogin> doubles = world.ledger().doubleLogins();
        assertThat(doubles).hasSize(ofA.size());
        for (DoubleLogin d : doubles) {
            assertThat(d.superseded())
                    .isIn(firstLoginsOfA.stream()
                            .map(l -> world.ledger().login(l.token()).orElseThrow())
                            .toList());
            assertThat(d.superseded().end()).isEqualTo(End.SUPERSEDED);
            assertThat(d.next().client()).isEqualTo("B");
            // B logged in only after A's session was gone for G (never on a frozen but live session)
            assertThat(d.next().loginNanos() - vanish.lastSeenSentNanos())
                    .as(
                            "B logged in %d ms after A's ephemeral node vanished; grace is %d ms",
                            (d.next().loginNanos() - vanish.lastSeenSentNanos()) / 1_000_000, grace / 1_000_000)
                    .isGreaterThan(grace);
        }
        long lastMove =
                doubles.stream().mapToLong(d -> d.next().loginNanos()).max().orElseThrow();

        // 2. at no time did A act on a PID after B logged in to it (the platform would have refused
        //    and recorded it), nor on any PID it used to hold after it was thawed (under its frozen
        //    logins; the real leader may legitimately hand one back to A's new instance later)
        world.platform().assertNoViolations();
        Set<String> frozenTokens = new java.util.HashSet<>();
        firstLoginsOfA.forEach(l -> frozenTokens.add(l.token()));
        for (String pid : ofA) {
            long movedAt = world.ledger().logins(pid, "B").get(0).loginNanos();
            List<Event> actionsOfA = world.ledger()
                    .events(e -> e.kind() == Kind.ACTION
                            && e.client().equals("A")
                            && e.account().equals(pid)
                            && frozenTokens.contains(e.token()));
            assertThat(actionsOfA).isNotEmpty().allMatch(e -> e.nanos() < movedAt && e.nanos() < thawedAt);
        }

        // 3. once thawed, A logged out of every superseded login before it logged in to anything
        long lastLogout = Long.MIN_VALUE;
        for (String pid : ofA) {
            List<Event> logouts = world.ledger()
                    .events(e -> e.kind() == Kind.LOGOUT
                            && e.client().equals("A")
                            && e.account().equals(pid));
            assertThat(logouts).hasSize(1);
            assertThat(logouts.get(0).answer()).isEqualTo(Answer.STALE);
            assertThat(logouts.get(0).nanos()).isGreaterThan(thawedAt);
            lastLogout = Math.max(lastLogout, logouts.get(0).nanos());
        }
        List<Login> newLoginsOfA = new java.util.ArrayList<>();
        for (String pid : all) {
            world.ledger().logins(pid, "A").stream()
                    .filter(l -> l.loginNanos() > thawedAt)
                    .forEach(newLoginsOfA::add);
        }
        assertThat(newLoginsOfA).as("A's new instance logged in to something").isNotEmpty();
        for (Login login : newLoginsOfA) {
            assertThat(login.loginNanos())
                    .as("A took %s only after revoking", login.account())
                    .isGreaterThan(lastLogout);
        }
        assertThat(after.instanceId()).isNotEqualTo(before.instanceId());

        world.timing("T (negotiated)", t.toNanos());
        world.timing("SIGSTOP -> ephemeral node gone (firstGone)", vanish.firstGoneNanos() - stoppedAt);
        world.timing("ephemeral node gone (lastSeen) -> last login by B", lastMove - vanish.lastSeenSentNanos());
        world.timing("SIGSTOP .. SIGCONT (pause)", thawedAt - stoppedAt);
        world.timing("SIGCONT -> A's last (stale) logout", lastLogout - thawedAt);
        world.timing("SIGCONT -> A registered again (new session)", after.atNanos() - thawedAt);
    }
}
