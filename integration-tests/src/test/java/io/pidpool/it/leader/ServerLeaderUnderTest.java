package io.pidpool.it.leader;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.leader.ReadModel;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The real leader: {@code servers} pid-server {@link ClusterMember}s (each with its own Curator client
 * and place in the election) over one H2 database in memory (the real Jdbi adapters, migrated by the
 * real bootstrap) and one {@link SecretSealer} with a random AES key, which {@link #secretKey()}
 * hands to the client JVMs.
 *
 * <p>{@link #addPids} goes the operator's way: an ADD batch submitted to a node's {@code
 * BatchService}, waited for until DEALED; each PID gets the password {@code pw-<pid>} and a monthly
 * quota of 100. The grace period is the one the scenario asks for, set as {@link
 * LeaderSettings#grace()}; the rebalance delay is zero (a departed instance's share is handed on
 * after the grace, not after a minute).
 */
public final class ServerLeaderUnderTest implements LeaderUnderTest {
    private static final Logger log = LoggerFactory.getLogger(ServerLeaderUnderTest.class);
    private static final AtomicLong DATABASES = new AtomicLong();
    /** The nodes' requested ZooKeeper session timeout (the test servers grant it). */
    public static final Duration SESSION_TIMEOUT = Duration.ofSeconds(3);

    private final String connectString;
    private final String cluster;
    private final Duration grace;
    private final int servers;
    private final UnaryOperator<Repositories> wrapRepositories;
    private final String key;
    private final SecretSealer sealer;
    private final AtomicLong ids = new AtomicLong(System.currentTimeMillis() << 12);
    private final List<ClusterMember> nodes = new CopyOnWriteArrayList<>();
    private Database database;
    private Repositories repositories;
    /** How long a departed instance's share waits for a replacement; zero unless a test sets it. */
    private volatile Duration rebalanceDelay = Duration.ZERO;

    private boolean closed;

    public ServerLeaderUnderTest(String connectString, String cluster, Duration grace, int servers) {
        this(connectString, cluster, grace, servers, UnaryOperator.identity());
    }

    /**
     * @param wrapRepositories decorates the repositories the nodes use (a test's hook into a batch's
     *     transaction); the test's own reads ({@link #repositories()}) are not decorated
     */
    public ServerLeaderUnderTest(
            String connectString,
            String cluster,
            Duration grace,
            int servers,
            UnaryOperator<Repositories> wrapRepositories) {
        if (servers < 1 || servers > 5) {
            throw new IllegalArgumentException("servers must be within 1..5, was " + servers);
        }
        this.connectString = connectString;
        this.cluster = cluster;
        this.grace = grace;
        this.servers = servers;
        this.wrapRepositories = wrapRepositories;
        byte[] raw = new byte[32];
        new SecureRandom().nextBytes(raw);
        this.key = Base64.getEncoder().encodeToString(raw);
        this.sealer = SecretSealer.fromSingleKey(key);
    }

    /** One node, selected with {@code -Dpidpool.it.leader=server} (the default). */
    public static LeaderUnderTest.Factory factory() {
        return new LeaderUnderTest.Factory() {
            @Override
            public String name() {
                return "server";
            }

            @Override
            public LeaderUnderTest create(String connectString, String cluster, Duration grace) {
                return new ServerLeaderUnderTest(connectString, cluster, grace, 1);
            }
        };
    }

    /** The settings every node runs with: short intervals, the given grace, no rebalance delay. */
    public static LeaderSettings settings(Duration grace) {
        return LeaderSettings.defaults()
                .withGrace(grace)
                .withRebalanceDelay(Duration.ZERO)
                .withIntervals(Duration.ofMillis(500), Duration.ofSeconds(5), Duration.ofMillis(200))
                .withFailurePolicy(Duration.ofSeconds(10), 3, Duration.ofMillis(300), Duration.ofMinutes(10));
    }

    @Override
    public synchronized void start() {
        if (database != null) {
            throw new IllegalStateException("already started");
        }
        database = Database.open(
                "jdbc:h2:mem:it" + ProcessHandle.current().pid() + "x" + DATABASES.incrementAndGet()
                        + ";DB_CLOSE_DELAY=-1",
                "sa",
                "");
        repositories = database.repositories(Clock.systemUTC());
        for (int i = 1; i <= servers; i++) {
            startNode("s" + i);
        }
        awaitLeader(Duration.ofSeconds(30));
    }

    /** Nodes started from now on wait this long for a replacement before spreading a departed share. */
    public ServerLeaderUnderTest withRebalanceDelay(Duration delay) {
        this.rebalanceDelay = delay;
        return this;
    }

    /** Starts one more node (e.g. to replace a killed one). */
    public synchronized ClusterMember startNode(String nodeId) {
        ClusterMember node = ClusterMember.builder()
                .nodeId(nodeId)
                .connectString(connectString)
                .cluster(cluster)
                .sessionTimeout(SESSION_TIMEOUT)
                .settings(settings(grace).withRebalanceDelay(rebalanceDelay))
                .repositories(wrapRepositories.apply(repositories))
                .sealer(sealer::seal)
                .ids(ids::incrementAndGet)
                .build();
        nodes.add(node);
        node.start();
        return node;
    }

    /** Waits (polling every 20 ms) until some node leads; returns it. */
    public ClusterMember awaitLeader(Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (true) {
            Optional<ClusterMember> leader = leader();
            if (leader.isPresent()) {
                return leader.get();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no leader within " + atMost);
            }
            pause(20);
        }
    }

    /** The node that leads right now, if any. */
    public Optional<ClusterMember> leader() {
        return nodes.stream().filter(ClusterMember::isLeader).findFirst();
    }

    public List<ClusterMember> nodes() {
        return List.copyOf(nodes);
    }

    /** The database, undecorated (for the test's own checks). */
    public Repositories repositories() {
        return repositories;
    }

    /** Submits a batch through any live node (a follower if there is one) and returns its id. */
    public BatchId submit(List<Operation<String>> operations) {
        ClusterMember via =
                nodes.stream().filter(n -> !n.isLeader()).findFirst().orElseGet(() -> nodes.get(0));
        return via.batches().submit(operations, "it");
    }

    /** Waits until the batch is final (DEALED or FAILED), polling the database. */
    public BatchRecord awaitBatch(BatchId id, Duration atMost) {
        long deadline = System.nanoTime() + atMost.toNanos();
        while (true) {
            Optional<BatchRecord> record = readBatch(id);
            if (record.isPresent()
                    && (record.get().status() == BatchStatus.DEALED
                            || record.get().status() == BatchStatus.FAILED)) {
                return record.get();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("batch " + id + " not final within " + atMost + ": " + record);
            }
            pause(50);
        }
    }

    /** The batch as any node that answers reads it (a closed node does not). */
    private Optional<BatchRecord> readBatch(BatchId id) {
        RuntimeException last = null;
        for (ClusterMember node : nodes) {
            try {
                return node.batches().get(id);
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw new IllegalStateException("no node could read batch " + id, last);
    }

    /** The PID specs {@link #addPids} uses: password {@code pw-<pid>}, quota 100. */
    public static List<PidSpec<String>> specs(Collection<String> pids) {
        return pids.stream()
                .map(pid -> new PidSpec<>(pid, "pw-" + pid, 100, 0, Map.of()))
                .toList();
    }

    @Override
    public void addPids(ModuleKey module, Collection<String> pids) {
        List<Operation<String>> ops = new ArrayList<>();
        List<PidSpec<String>> specs = specs(pids);
        for (int from = 0; from < specs.size(); from += 500) {
            ops.add(new Operation.Add<>(module, specs.subList(from, Math.min(specs.size(), from + 500))));
        }
        BatchId id = submit(ops);
        BatchRecord done = awaitBatch(id, Duration.ofSeconds(60));
        if (done.status() != BatchStatus.DEALED || !done.results().stream().allMatch(OperationResult::ok)) {
            throw new IllegalStateException("ADD batch " + id + " did not succeed: " + done);
        }
        log.info("added {} PIDs to {} (batch {})", pids.size(), module, id);
    }

    @Override
    public Duration grace() {
        return grace;
    }

    @Override
    public Optional<String> secretKey() {
        return Optional.of(key);
    }

    @Override
    public Map<String, String> assignments(ModuleKey module) {
        Map<String, String> result = new TreeMap<>();
        try {
            ClusterMember node = leader().orElseGet(() -> nodes.get(0));
            for (ReadModel.Pid pid : node.pids(module, null)) {
                if (pid.instance() != null) {
                    result.put(pid.id(), pid.instance().value() + "/" + pid.nodeState());
                }
            }
        } catch (PidPoolException | IndexOutOfBoundsException e) {
            result.put("?", "unavailable: " + e.getMessage());
        }
        return result;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ClusterMember node : nodes) {
            try {
                node.close();
            } catch (RuntimeException e) {
                log.warn("closing {}: {}", node.nodeId(), e.toString());
            }
        }
        if (database != null) {
            database.close();
        }
    }

    private static void pause(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
