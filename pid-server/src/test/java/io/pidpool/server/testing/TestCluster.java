package io.pidpool.server.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.ClusterMemberBuilder;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.leader.RepositoryLeaderStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A loopback ZooKeeper, an in-memory store, server nodes and simulated instances, closed together.
 * Integration tests build their scenario on it; as a JUnit extension field
 * ({@code @RegisterExtension final TestCluster cluster = new TestCluster();}) it is closed after each test.
 */
public final class TestCluster implements AutoCloseable, AfterEachCallback {
    public static final ZkLayout LAYOUT = new ZkLayout("test");

    public final LoopbackZooKeeper zk = new LoopbackZooKeeper();
    /** An H2 database in memory, migrated by the real bootstrap, behind the real Jdbi adapters. */
    public final Database database =
            Database.open("jdbc:h2:mem:leader" + System.nanoTime() + ";DB_CLOSE_DELAY=-1", "sa", "");

    public final Repositories repositories = database.repositories(Clock.systemUTC());
    public final RepositoryLeaderStore store = new RepositoryLeaderStore(repositories);
    public final Platform platform = new Platform();
    private final AtomicLong ids = new AtomicLong(System.currentTimeMillis() << 12);
    public final List<ClusterMember> nodes = new ArrayList<>();
    public final List<SimulatedInstance> instances = new ArrayList<>();
    private int nextInstance;

    /** Settings for tests: short intervals, a 1.2 s grace period, shares of vacant slots spread at once. */
    public static LeaderSettings settings() {
        return LeaderSettings.defaults()
                .withGrace(Duration.ofMillis(1_200))
                .withRebalanceDelay(Duration.ZERO)
                .withIntervals(Duration.ofMillis(500), Duration.ofSeconds(2), Duration.ofMillis(200))
                .withFailurePolicy(Duration.ofSeconds(5), 3, Duration.ofMillis(300), Duration.ofMinutes(10));
    }

    /** Trivial reversible "sealing" for tests: key id {@code test}, the bytes reversed. */
    public static SealedSecret seal(String plain) {
        byte[] bytes = plain.getBytes(StandardCharsets.UTF_8);
        byte[] reversed = new byte[bytes.length];
        for (int i = 0; i < bytes.length; i++) {
            reversed[i] = bytes[bytes.length - 1 - i];
        }
        return new SealedSecret("test", reversed);
    }

    public static SealedSecret secret(String pid) {
        return new SealedSecret("test", ("sealed-" + pid).getBytes(StandardCharsets.UTF_8));
    }

    /** Adds {@code count} PIDs named {@code <prefix>-<n>} to a module (configured with {@code servers}). */
    public List<String> addPids(ModuleKey module, int servers, String prefix, int count) {
        repositories.modules().put(ModuleConfig.of(module, servers));
        List<String> ids = new ArrayList<>();
        List<PidRecord> accounts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = prefix + "-" + i;
            accounts.add(new PidRecord(id, module, 10_000, 0, PidAvailability.ACTIVE, secret(id), Map.of()));
            ids.add(id);
        }
        repositories.pids().insertAll(accounts);
        return ids;
    }

    public ClusterMember startNode(String id) {
        return startNode(id, b -> b);
    }

    public ClusterMember startNode(String id, UnaryOperator<ClusterMemberBuilder> customize) {
        ClusterMember node = customize
                .apply(ClusterMember.builder()
                        .nodeId(id)
                        .connectString(zk.connectString())
                        .cluster(LAYOUT.cluster())
                        .sessionTimeout(Duration.ofSeconds(2))
                        .settings(settings())
                        .repositories(repositories)
                        .sealer(TestCluster::seal)
                        .ids(ids::incrementAndGet))
                .build();
        nodes.add(node);
        node.start();
        return node;
    }

    /** What {@link #leaderWithTwoInstances} started. */
    public record Settled(List<String> pids, ClusterMember leader, SimulatedInstance first, SimulatedInstance second) {}

    /**
     * {@code count} PIDs of {@code module} (2 servers), node {@code s1} as the leader and two instances
     * holding them all, settled: the start of every failover test.
     */
    public Settled leaderWithTwoInstances(
            ModuleKey module, String prefix, int count, UnaryOperator<ClusterMemberBuilder> customize) {
        List<String> pids = addPids(module, 2, prefix, count);
        ClusterMember leader = startNode("s1", customize);
        await().atMost(Duration.ofSeconds(40)).until(leader::isLeader);
        SimulatedInstance first = startInstance(module);
        SimulatedInstance second = startInstance(module);
        await().atMost(Duration.ofSeconds(40)).until(() -> settled(module, pids));
        return new Settled(pids, leader, first, second);
    }

    public SimulatedInstance startInstance(ModuleKey module) {
        var sim = new SimulatedInstance(zk.connectString(), LAYOUT, module, "sim" + nextInstance++, platform);
        instances.add(sim);
        return sim.start();
    }

    public ClusterMember leader() {
        return nodes.stream().filter(ClusterMember::isLeader).findFirst().orElse(null);
    }

    public List<SimulatedInstance> instancesOf(ModuleKey module) {
        return instances.stream().filter(s -> s.module().equals(module)).toList();
    }

    /** PID -> instance ids holding it (live simulated instances only). */
    public Map<String, Set<String>> holders() {
        Map<String, Set<String>> holders = new HashMap<>();
        for (SimulatedInstance sim : instances) {
            for (String pid : sim.held()) {
                holders.computeIfAbsent(pid, k -> new TreeSet<>()).add(sim.id().value());
            }
        }
        return holders;
    }

    /** Every PID of {@code pids} is held by exactly one live instance of {@code module}, balanced within 1. */
    public boolean settled(ModuleKey module, List<String> pids) {
        List<SimulatedInstance> live = instancesOf(module);
        Set<String> all = new HashSet<>();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (SimulatedInstance sim : live) {
            Set<String> held = sim.held();
            for (String pid : held) {
                if (!all.add(pid)) {
                    return false;
                }
            }
            min = Math.min(min, held.size());
            max = Math.max(max, held.size());
        }
        return all.equals(new HashSet<>(pids)) && max - min <= 1;
    }

    /** Per module: instance -> held count, and how many of the module's PIDs are held. */
    public String describe(ModuleKey module, List<String> pids) {
        StringBuilder text = new StringBuilder(module + ":");
        Set<String> all = new HashSet<>();
        for (SimulatedInstance sim : instancesOf(module)) {
            text.append(' ').append(sim.id()).append('=').append(sim.held().size());
            all.addAll(sim.held());
        }
        all.retainAll(new HashSet<>(pids));
        return text.append(" held ")
                .append(all.size())
                .append('/')
                .append(pids.size())
                .toString();
    }

    public PidRecord pid(String id) {
        return repositories.pids().find(id).orElseThrow();
    }

    public Map<String, Assignment> assignments() {
        Map<String, Assignment> rows = new HashMap<>();
        repositories.assignments().findAll().forEach(a -> rows.put(a.pidId(), a));
        return rows;
    }

    public void assertNoDoubleLogin() {
        assertThat(platform.violations()).as("double logins").isEmpty();
    }

    public void remove(SimulatedInstance sim) {
        instances.remove(sim);
    }

    @Override
    public void afterEach(ExtensionContext context) throws java.io.IOException {
        close();
    }

    @Override
    public void close() throws java.io.IOException {
        for (SimulatedInstance sim : instances) {
            try {
                sim.crash();
            } catch (RuntimeException e) {
                // best effort
            }
        }
        for (ClusterMember node : nodes) {
            node.close();
        }
        zk.close();
        database.close();
    }
}
