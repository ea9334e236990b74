package io.pidpool.it.fault;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.it.client.ClientProcess;
import io.pidpool.it.leader.FakeLeaderUnderTest;
import io.pidpool.it.leader.LeaderUnderTest;
import io.pidpool.it.leader.ServerLeaderUnderTest;
import io.pidpool.it.platform.PlatformLedger;
import io.pidpool.it.platform.PlatformServer;
import io.pidpool.it.zk.ZkProbe;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One scenario's world on a given ZooKeeper: a fresh cluster name, the recording {@link
 * PlatformServer}, a started {@link LeaderUnderTest}, the test's own {@link ZkProbe}, and the client
 * JVMs the scenario starts. {@link #close()} destroys everything, client JVMs first.
 *
 * <h2>Timing used by every scenario (docs/design.md §6)</h2>
 *
 * Clients ask for T = {@link #REQUESTED_T}; the test ZooKeeper (tick 100 ms) grants it, and every
 * scenario reads the <em>negotiated</em> T back from the client and checks {@link #checkGrace} before
 * doing arithmetic with it. The leader's grace is G = T/3 + L with a logout allowance L = {@link
 * #LOGOUT_ALLOWANCE}: a client has revoked by 0.617T + L after its last ZooKeeper contact c, the
 * server expires the session at c + T at the earliest, so the earliest foreign login is c + T + G =
 * c + 4T/3 + L.
 *
 * <p>The leader is chosen with the system property {@code pidpool.it.leader}: {@code server} (default,
 * the real pid-server leader) or {@code fake}.
 */
final class FaultWorld implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FaultWorld.class);
    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    static final ModuleKey MODULE = ModuleKey.parse("fin#risk#scorer");
    static final Duration REQUESTED_T = Duration.ofSeconds(3);
    static final Duration LOGOUT_ALLOWANCE = Duration.ofMillis(500);
    static final Duration GRACE = REQUESTED_T.dividedBy(3).plus(LOGOUT_ALLOWANCE);
    /** Deadline for anything that should happen "soon" (JVM start, assignment, re-registration). */
    static final Duration WAIT = Duration.ofSeconds(30);

    private final String connectString;
    private final String cluster;
    private final String scenario;
    private final PlatformServer platform;
    private final LeaderUnderTest leader;
    private final ZkProbe probe;
    private final List<ClientProcess> clients = new ArrayList<>();
    private final Path logDirectory;

    FaultWorld(String connectString, String scenario) {
        this.connectString = connectString;
        this.scenario = scenario;
        this.cluster = "f" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        this.logDirectory = Path.of("target", "it-clients", scenario);
        this.platform = PlatformServer.start();
        this.leader = leaderFactory().create(connectString, cluster, GRACE);
        this.leader.start();
        this.probe = new ZkProbe(connectString, cluster);
        log.info(
                "{}: cluster {}, leader {}, grace {} ms",
                scenario,
                cluster,
                leaderFactory().name(),
                GRACE.toMillis());
    }

    static LeaderUnderTest.Factory leaderFactory() {
        String which = System.getProperty("pidpool.it.leader", "server");
        return switch (which) {
            case "server" -> ServerLeaderUnderTest.factory();
            case "fake" -> FakeLeaderUnderTest.factory();
            default ->
                throw new IllegalArgumentException("unknown pidpool.it.leader '" + which + "' (known: server, fake)");
        };
    }

    PlatformServer platform() {
        return platform;
    }

    PlatformLedger ledger() {
        return platform.ledger();
    }

    LeaderUnderTest leader() {
        return leader;
    }

    ZkProbe probe() {
        return probe;
    }

    /** Starts a client JVM connected to this world's ZooKeeper. */
    ClientProcess client(String name) {
        return client(name, connectString);
    }

    /** Starts a client JVM connected to ZooKeeper through {@code connectString} (e.g. a proxy). */
    ClientProcess client(String name, String connectString) {
        ClientProcess client = ClientProcess.start(new ClientProcess.Spec(
                name,
                connectString,
                cluster,
                MODULE.toString(),
                REQUESTED_T,
                platform.address(),
                logDirectory,
                leader.secretKey().orElse(null)));
        clients.add(client);
        return client;
    }

    /**
     * Starts client A (through {@code connectA}) and client B, waits until the leader answered both,
     * adds {@code pids} and waits until every one is held; returns A's share (never empty or all,
     * since the leader shares free PIDs out evenly).
     */
    Set<String> twoClientsSharing(String connectA, List<String> pids) {
        ClientProcess a = client("A", connectA);
        ClientProcess b = client("B");
        a.awaitHandshake(WAIT);
        b.awaitHandshake(WAIT);
        addPids(pids.toArray(String[]::new));
        awaitAllHeld(pids, WAIT);
        Set<String> ofA = platformHeldBy("A", pids);
        assertThat(ofA).as("the leader shares the PIDs out").isNotEmpty().hasSizeLessThan(pids.size());
        // both applications are busy with their PIDs before any fault starts
        awaitActing("A", ofA, WAIT);
        awaitActing("B", platformHeldBy("B", pids), WAIT);
        return ofA;
    }

    void addPids(String... pids) {
        leader.addPids(MODULE, List.of(pids));
    }

    /**
     * The negotiated T of the client's registration, after checking that the leader's grace covers
     * T/3 + L for it (the arithmetic every scenario relies on).
     */
    Duration checkGrace(ClientProcess client) {
        Duration t = client.registration().orElseThrow().sessionTimeout();
        assertThat(leader.grace())
                .as("grace must cover T/3 + L for the negotiated T = %s", t)
                .isGreaterThanOrEqualTo(t.dividedBy(3).plus(LOGOUT_ALLOWANCE));
        return t;
    }

    /** The path of the client's instance node (relative to the namespace). */
    String instancePath(ClientProcess.Registered registration) {
        return new ZkLayout(cluster).instance(MODULE, InstanceId.of(registration.instanceId()));
    }

    /** PIDs with an open platform login of {@code client}. */
    Set<String> platformHeldBy(String client, Collection<String> pids) {
        Set<String> held = new TreeSet<>();
        for (String pid : pids) {
            if (platform.holder(pid).filter(client::equals).isPresent()) {
                held.add(pid);
            }
        }
        return held;
    }

    /**
     * Waits until every PID has an open login on the platform and each holder's JVM reports it in
     * {@code heldPids()}; returns PID to holder.
     */
    Map<String, String> awaitAllHeld(Collection<String> pids, Duration atMost) {
        await("every PID held: " + pids)
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> pids.stream().allMatch(pid -> platform.holder(pid)
                        .flatMap(this::process)
                        .map(c -> c.held().contains(pid))
                        .orElse(false)));
        Map<String, String> holders = new TreeMap<>();
        pids.forEach(pid -> holders.put(pid, platform.holder(pid).orElseThrow()));
        return holders;
    }

    /** Waits until {@code client} has used each of {@code pids} (a successful platform action). */
    void awaitActing(String client, Collection<String> pids, Duration atMost) {
        await(client + " acting on " + pids)
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> pids.stream().allMatch(pid -> !platform.ledger()
                        .events(e -> e.kind() == PlatformLedger.Kind.ACTION
                                && e.client().equals(client)
                                && e.account().equals(pid)
                                && e.answer() == PlatformLedger.Answer.OK)
                        .isEmpty()));
    }

    /** Waits until {@code client} has an open login to each of {@code pids}. */
    void awaitPlatformHolder(String client, Collection<String> pids, Duration atMost) {
        await(client + " logged in to " + pids)
                .atMost(atMost)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> platformHeldBy(client, pids).size() == pids.size());
    }

    Optional<ClientProcess> process(String name) {
        return clients.stream().filter(c -> c.name().equals(name)).findFirst();
    }

    /** No double login, no use of an account without an open login (docs/design.md §2 promise 1). */
    void assertSafety() {
        platform.assertNoDoubleLogin();
        platform.assertNoViolations();
    }

    /** Logs a measurement (in ms) and appends it to {@code target/fault-timings.md}. */
    void timing(String what, long nanos) {
        note(what, Math.round(nanos / 1e6) + " ms");
    }

    /** Logs an observation and appends it to {@code target/fault-timings.md}. */
    void note(String what, String value) {
        log.info("TIMING {}: {} = {}", scenario, what, value);
        try {
            Files.writeString(
                    Path.of("target", "fault-timings.md"),
                    "| " + scenario + " | " + what + " | " + value + " |\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (ClientProcess client : clients) {
            client.close();
        }
        leader.close();
        probe.close();
        platform.close();
    }
}
