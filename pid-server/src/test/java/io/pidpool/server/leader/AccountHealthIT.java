package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.CooldownRepository;
import io.pidpool.server.testing.TestCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Account health end to end: the real leader ({@link ClusterMember}: curator-test ZooKeeper on loopback,
 * H2 through the Jdbi adapters, cooldowns stored in {@code pool_pid_cooldown}) and two real {@link
 * PidClient}s. A client's login-failure or login-conflict report reaches the leader through the PID
 * node; the PID is revoked from the reporter, handed to nobody while it cools down, handed out again
 * once the cooldown has ended, and an alert is raised. A new leader keeps the stored end time.
 *
 * <p>Time: cooldown ends are compared on the leader's own monotonic clock ({@code System.nanoTime},
 * the same in this JVM): a re-assignment must start at or after the end, whatever the machine's load.
 * Waits are deadline polls, never fixed sleeps.
 */
class AccountHealthIT {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String PID = "acct-0";

    final List<String> alerts = new CopyOnWriteArrayList<>();
    /** Every onAssigned: which client, which PID, when (System.nanoTime at the call). */
    final List<Event> assigned = new CopyOnWriteArrayList<>();

    final List<Event> revoked = new CopyOnWriteArrayList<>();
    /** The recording "platform": who is logged in with each account; a second login is a violation. */
    final Map<String, String> loggedIn = new ConcurrentHashMap<>();

    final List<String> violations = new CopyOnWriteArrayList<>();
    final List<AutoCloseable> closeables = new ArrayList<>();
    TestCluster cluster;
    CooldownRepository cooldowns;

    record Event(String client, String pid, long atNanos) {}

    @BeforeEach
    void setUp() {
        cluster = new TestCluster();
        cooldowns = cluster.database.cooldowns();
        cluster.addPids(M, 2, "acct", 1);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        cluster.close();
        assertThat(violations).as("double logins").isEmpty();
    }

    ClusterMember startLeader(String id, Duration cooldown) {
        ClusterMember node =
                cluster.startNode(id, b -> b.settings(TestCluster.settings().withCooldown(cooldown))
                        .cooldowns(cooldowns)
                        .alerts(alerts::add));
        await().atMost(WAIT).until(node::isLeader);
        return node;
    }

    /** A client whose listener logs in on a shared "platform"; {@code inOnAssigned} runs inside onAssigned. */
    PidClient startClient(String name, java.util.function.BiConsumer<PidClient[], PidAccount> inOnAssigned) {
        PidClient[] self = new PidClient[1];
        PidClient client = PidClient.builder()
                .connectString(cluster.zk.connectString())
                .cluster(TestCluster.LAYOUT.cluster())
                .module(M.toString())
                .instanceId(name)
                .host("test-host")
                .secretOpener((keyId, ciphertext) -> new String(ciphertext, StandardCharsets.UTF_8))
                .sessionTimeout(Duration.ofSeconds(4))
                .listener(new PidListener() {
                    @Override
                    public void onAssigned(PidAccount account) {
                        assigned.add(new Event(name, account.id(), System.nanoTime()));
                        String other = loggedIn.putIfAbsent(account.id(), name);
                        if (other != null) {
                            violations.add(account.id() + " logged in by " + name + " while " + other + " is");
                        }
                        if (inOnAssigned != null) {
                            inOnAssigned.accept(self, account);
                        }
                    }

                    @Override
                    public void onRevoked(PidAccount account) {
                        loggedIn.remove(account.id(), name);
                        revoked.add(new Event(name, account.id(), System.nanoTime()));
                    }
                })
                .build();
        self[0] = client;
        closeables.add(client);
        client.start();
        return client;
    }

    List<Event> assignmentsOf(String pid, String client) {
        return assigned.stream()
                .filter(e ->
                        e.pid().equals(pid) && (client == null || e.client().equals(client)))
                .toList();
    }

    Optional<Cooldown> storedCooldown(String pid) {
        return cooldowns.findAll().stream().filter(c -> c.pidId().equals(pid)).findFirst();
    }

    static void awaitUntil(String what, java.util.concurrent.Callable<Boolean> condition) {
        await(what).atMost(WAIT).pollInterval(Duration.ofMillis(20)).until(condition);
    }

    @Test
    void aReportedLoginFailureRevokesThePidKeepsItFromEveryoneDuringTheCooldownAndHandsItOutAfterwards() {
        Duration cooldown = Duration.ofSeconds(3);
        ClusterMember leader = startLeader("s1", cooldown);
        PidClient a = startClient("a", null);
        awaitUntil("a holds " + PID, () -> a.heldPids().equals(Set.of(PID)));
        PidClient b = startClient("b", null);
        awaitUntil("b registered", () -> b.state() == PidClient.State.REGISTERED);
        awaitUntil(
                "b got its pids node",
                () -> b.registration().map(r -> !r.pidsPath().isEmpty()).orElse(false));
        assertThat(b.heldPids()).isEmpty(); // one PID over two instances: a keeps it

        assertThat(b.reportLoginFailure(PID, "not mine"))
                .as("b has no node for it")
                .isFalse();
        assertThat(a.reportLoginFailure(PID, "password expired")).isTrue();

        awaitUntil("the leader cools it down", () -> leader.cooldownsForTests().containsKey(PID));
        long endNanos = leader.cooldownsForTests().get(PID);
        awaitUntil("a is told to give it up", () -> revoked.stream()
                .anyMatch(e -> e.pid().equals(PID)));
        assertThat(a.heldPids()).isEmpty();
        long revokedAt = revoked.get(0).atNanos();

        // stored, with status COOLDOWN, and an alert naming the PID and the report
        Cooldown stored = storedCooldown(PID).orElseThrow();
        assertThat(stored.cause()).contains("LOGIN_FAILURE", "password expired", "a-");
        assertThat(Duration.between(stored.startedAt(), stored.until())).isEqualTo(cooldown);
        assertThat(cluster.pid(PID).status()).isEqualTo(PidAvailability.COOLDOWN);
        assertThat(alerts).anyMatch(m -> m.contains("ALERT PID " + PID + " LOGIN_FAILURE (password expired)"));

        // handed out again after the end, to one instance, and not a moment before
        awaitUntil(
                "someone holds it again",
                () -> a.heldPids().contains(PID) || b.heldPids().contains(PID));
        List<Event> again = assigned.stream()
                .filter(e -> e.pid().equals(PID) && e.atNanos() > revokedAt)
                .toList();
        assertThat(again).hasSize(1);
        assertThat(again.get(0).atNanos() - endNanos)
                .as("re-assigned %d ms after the cooldown's end", (again.get(0).atNanos() - endNanos) / 1_000_000)
                .isGreaterThanOrEqualTo(0);
        awaitUntil(
                "status ACTIVE, stored cooldown gone",
                () -> cluster.pid(PID).status() == PidAvailability.ACTIVE
                        && storedCooldown(PID).isEmpty());
        assertThat(alerts).contains("PID " + PID + " leaves cooldown");
        assertThat(a.heldPids().size() + b.heldPids().size()).isEqualTo(1);
    }

    @Test
    void aNewLeaderKeepsTheStoredEndTimeAndAnOperatorMayShortenIt() {
        ClusterMember first = startLeader("s1", Duration.ofHours(1));
        PidClient a = startClient("a", null);
        awaitUntil("a holds " + PID, () -> a.heldPids().equals(Set.of(PID)));
        PidClient b = startClient("b", null);
        awaitUntil(
                "b registered",
                () -> b.registration().map(r -> !r.pidsPath().isEmpty()).orElse(false));

        assertThat(a.reportLoginConflict(PID, "logged in elsewhere")).isTrue();
        awaitUntil("revoked from a", () -> a.heldPids().isEmpty() && !revoked.isEmpty());
        awaitUntil("stored", () -> storedCooldown(PID).isPresent());
        Instant until = storedCooldown(PID).orElseThrow().until();
        assertThat(alerts).anyMatch(m -> m.contains("LOGIN_CONFLICT (logged in elsewhere)"));

        // the leader goes; its successor is configured with a much longer cooldown
        first.close();
        ClusterMember second = startLeader("s2", Duration.ofDays(1));
        long passes = second.passes();
        awaitUntil("the successor has reconciled a few times", () -> second.passes() >= passes + 5);
        long leftNanos = second.cooldownsForTests().get(PID) - System.nanoTime();
        assertThat(Duration.ofNanos(leftNanos))
                .as("the stored end, not a fresh day")
                .isLessThanOrEqualTo(Duration.between(Instant.now(), until).plusSeconds(1));
        assertThat(storedCooldown(PID).orElseThrow().until()).isEqualTo(until);
        assertThat(a.heldPids()).isEmpty();
        assertThat(b.heldPids()).isEmpty();
        assertThat(assignmentsOf(PID, null)).hasSize(1); // only a's first assignment

        // an operator lifts it (ends it now): the leader reads the stored cooldowns on its next reload
        Cooldown stored = storedCooldown(PID).orElseThrow();
        cooldowns.put(new Cooldown(PID, Instant.now(), stored.cause() + "; lifted", stored.startedAt()));
        awaitUntil(
                "handed out again",
                () -> a.heldPids().contains(PID) || b.heldPids().contains(PID));
        awaitUntil(
                "status ACTIVE, stored cooldown gone",
                () -> cluster.pid(PID).status() == PidAvailability.ACTIVE
                        && storedCooldown(PID).isEmpty());
    }

    @Test
    void aConflictReportedFromInsideAThrowingOnAssignedCoolsDownAtOnceInsteadOfBeingRetried() {
        ClusterMember leader = startLeader("s1", Duration.ofHours(1));
        PidClient a = startClient("a", (self, account) -> {
            assertThat(self[0].reportLoginConflict(account.id(), "platform: second terminal"))
                    .isTrue();
            throw new IllegalStateException("login refused: second terminal");
        });
        awaitUntil("cooled down", () -> leader.cooldownsForTests().containsKey(PID));
        long passes = leader.passes();
        awaitUntil("a few more passes", () -> leader.passes() >= passes + 5);

        assertThat(assignmentsOf(PID, "a"))
                .as("not retried (the retry policy would try 3 times)")
                .hasSize(1);
        assertThat(storedCooldown(PID)).isPresent();
        assertThat(cluster.pid(PID).status()).isEqualTo(PidAvailability.COOLDOWN);
        assertThat(alerts).anyMatch(m -> m.contains("LOGIN_CONFLICT (platform: second terminal)"));
        assertThat(alerts).noneMatch(m -> m.contains("failed 3 times"));
        assertThat(a.heldPids()).isEmpty();
    }
}
