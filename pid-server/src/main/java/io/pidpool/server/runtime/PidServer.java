package io.pidpool.server.runtime;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.pidpool.client.internal.ids.ClusterSnowflakeIds;
import io.pidpool.client.internal.ids.CuratorWorkerIdRegistry;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.advice.AdviceMonitor;
import io.pidpool.server.advice.AdviceSetup;
import io.pidpool.server.config.ConfigLoader;
import io.pidpool.server.config.ServerConfig;
import io.pidpool.server.http.BearerTokens;
import io.pidpool.server.http.HttpApi;
import io.pidpool.server.http.OperatorApi;
import io.pidpool.server.jdbc.Database;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.leader.QuotaProvisioner;
import io.pidpool.server.redis.RedisQuotaProvisioner;
import io.pidpool.server.security.SecretRotationRoutes;
import io.pidpool.server.usage.UsageMonitor;
import io.pidpool.server.usage.UsageSyncService;
import io.pidpool.worker.runtime.WorkerMain;
import io.pidpool.worker.runtime.WorkerPool;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskHandlerProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pid-server process, built from a {@link ServerConfig}: a Curator client in the cluster's
 * namespace ({@code /pidpool/<cluster>}), the database (pool + Flyway migrations), a Redisson
 * client, a Snowflake worker-id slot, the coordination node, the health monitor and the operator
 * HTTP API, started in that order and closed in reverse.
 *
 * <p>{@link #start()} fails fast with {@code UNAVAILABLE} naming the dependency (and never its
 * credentials) when ZooKeeper, the database or Redis cannot be reached ({@link Backends}, whose
 * health {@link BackendProbes} report); whatever was started by then is closed again. {@link #close()} may be called from a shutdown hook at any time, also
 * while {@code start()} is still running on another thread.
 *
 * <p>The coordination node ({@link ClusterMember}: election, views, batches) gets its own ZooKeeper
 * session; the server's client serves the health check and the Snowflake worker-id slot that
 * numbers batches and audit rows, and the in-process pid-worker ({@code worker.enabled}), which
 * also runs the usage ledger sync ({@link UsageSyncService}: one task per quota shard, topped up every
 * {@code monitoring.syncIntervalMs}).
 */
public final class PidServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PidServer.class);
    private static final Duration HEALTH_INTERVAL = Duration.ofSeconds(5);
    static final String WORKER_GROUP = "default";

    private final ServerConfig config;
    private final SecretSealer sealer;
    private final ZkAuth zkAuth;
    private final Clock clock;
    private final String nodeId;
    private final Lifecycle lifecycle = new Lifecycle("pid-server");
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    /** {@code /metrics}: usage and server series, JVM, process, HTTP, ZooKeeper, pool ({@link ServerMetrics}). */
    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    private volatile CuratorFramework curator;
    private volatile Database database;
    private volatile RedissonClient redisson;
    private volatile ClusterSnowflakeIds ids;
    private volatile ClusterMember node;
    private volatile WorkerPool workers;
    private volatile UsageSyncService usageSync;
    private volatile UsageMonitor usage;
    private volatile HealthMonitor health;
    private volatile HttpApi http;
    private volatile AdviceSetup advice;

    private enum State {
        NEW,
        STARTING,
        RUNNING,
        CLOSED
    }

    /** Validates the configuration; nothing is started yet. */
    public PidServer(ServerConfig config) {
        this(config, defaultNodeId());
    }

    /** With a node id of the caller's (several servers in one JVM, e.g. tests of followers). */
    public PidServer(ServerConfig config, String nodeId) {
        this.config = ConfigLoader.validate(Objects.requireNonNull(config, "config"));
        this.sealer = this.config.security().sealer();
        this.zkAuth = ZkAuth.of(this.config.zookeeper().auth());
        this.clock = Clock.systemUTC();
        this.nodeId = io.pidpool.core.model.Names.requireToken(nodeId, "nodeId");
    }

    /** Starts every part; on failure closes what was started and rethrows. */
    public PidServer start() {
        if (!state.compareAndSet(State.NEW, State.STARTING)) {
            throw PidPoolException.illegalState("pid-server was already started");
        }
        try {
            // before anything joins the cluster: a taken port must fail a server that never led
            PortReservation reservedPort = lifecycle.add(
                    "HTTP port",
                    PortReservation.bind(config.http().host(), config.http().port()));
            lifecycle.add("JVM metrics", ServerMetrics.bindJvm(meters));
            curator = lifecycle.add("ZooKeeper client", Backends.curator(config, zkAuth));
            ServerMetrics.bindZooKeeper(meters, curator, config.zookeeper().connect());
            database = lifecycle.add("database", Backends.database(config.database()));
            database.bindMetrics(meters);
            database.bindCluster(config.cluster(), clock.instant()); // one cluster per database
            RedissonClient client = Backends.redisson(config.redis());
            lifecycle.add("Redis client", () -> client.shutdown(0, 2, TimeUnit.SECONDS));
            redisson = client;
            lifecycle.requireOpen("worker ids");
            CuratorWorkerIdRegistry registry = lifecycle.add(
                    "worker-id registry",
                    CuratorWorkerIdRegistry.builder()
                            .curator(curator)
                            .zkAuth(zkAuth)
                            .cluster(config.cluster())
                            .owner(nodeId)
                            .clock(clock)
                            .build());
            ids = lifecycle.add(
                    "Snowflake ids",
                    ClusterSnowflakeIds.builder()
                            .registry(registry)
                            .clock(clock)
                            .build());
            requireIds(ids);
            advice = lifecycle.add(
                    "alerts",
                    new AdviceSetup(
                            config.advice(),
                            config.cluster(),
                            database.alerts(),
                            database.dataSource(),
                            WORKER_GROUP,
                            ids::nextId,
                            clock));
            // added before the node, so it is closed after the node stops using it
            RedisQuotaProvisioner quota = lifecycle.add(
                    "quota provisioner",
                    RedisQuotaProvisioner.builder()
                            .redisson(client)
                            .cluster(config.cluster())
                            .clientId("leader-" + nodeId)
                            .build());
            lifecycle.requireOpen("coordination node");
            node = lifecycle.add("coordination node", buildNode(quota));
            startNode(node);
            if (config.worker().enabled()) {
                lifecycle.requireOpen("pid-worker");
                UsageSyncService sync =
                        UsageWiring.sync(config, client, database, clock, WORKER_GROUP, advice.alerts()::raiseLater);
                workers = lifecycle.add("pid-worker", startWorkers(sync.handlers()));
                usageSync = lifecycle.add("usage sync", sync.start(workers::wakeUp));
            }
            usage = lifecycle.add("usage monitor", UsageWiring.monitor(config, client, node, database, clock));
            AdviceMonitor monitor =
                    lifecycle.add("advice monitor", advice.startMonitor(node, database.repositories(clock), usage));
            health = lifecycle.add(
                    "health monitor",
                    new HealthMonitor(
                                    ServerMetrics.timedProbes(
                                            meters, BackendProbes.probed(config, curator, client), () -> health),
                                    BackendProbes.live(config, database))
                            .start(HEALTH_INTERVAL));
            OperatorApi operatorApi = new NodeOperatorApi(node, database.repositories(clock), ids::nextId, clock);
            lifecycle.requireOpen("HTTP API");
            HttpApi api = new HttpApi(
                            new HttpApi.Settings(
                                    config.http().host(),
                                    reservedPort.port(),
                                    config.http().maxRequestBytes(),
                                    config.http().metricsRequireToken()),
                            operatorApi,
                            health,
                            BearerTokens.of(config.security().tokens()))
                    .advice(monitor)
                    .with(UsageWiring.routes(meters, usage, usageSync, node))
                    .observe(ServerMetrics.http(meters));
            SecretRotationRoutes.register(api, sealer, database.repositories(clock), operatorApi);
            reservedPort.close(); // handed over to Jetty, which binds the same address next
            http = lifecycle.add("HTTP API", api.start());
            if (!state.compareAndSet(State.STARTING, State.RUNNING)) {
                throw PidPoolException.unavailable("pid-server is shutting down; closed during start-up", null);
            }
            log.info(
                    "pid-server of cluster '{}' running: http port {}, zookeeper {}, redis {}",
                    config.cluster(),
                    http.port(),
                    config.zookeeper().connect(),
                    Backends.redisLabel(config.redis()));
            return this;
        } catch (RuntimeException e) {
            lifecycle.close();
            state.set(State.CLOSED);
            throw e;
        }
    }

    /** Stops the HTTP API, the node, the health monitor and the clients, in reverse start order. Idempotent. */
    @Override
    public void close() {
        State previous = state.getAndSet(State.CLOSED);
        if (previous != State.CLOSED) {
            lifecycle.close();
            if (previous == State.RUNNING) {
                log.info("pid-server of cluster '{}' stopped", config.cluster());
            }
        }
    }

    public ServerConfig config() {
        return config;
    }

    /** Seals and opens PID passwords with the keyring of {@code security.secretKey(s)}. */
    public SecretSealer sealer() {
        return sealer;
    }

    /** Every route the HTTP API registered (what its OpenAPI document must describe). */
    public java.util.List<HttpApi.Route> httpRoutes() {
        return requireStarted(http).routes();
    }

    /** The bound HTTP port (the real one when configured with 0). */
    public int httpPort() {
        return requireStarted(http).port();
    }

    public CuratorFramework curator() {
        return requireStarted(curator);
    }

    /** The database: pool, migrated schema and the repository adapters. */
    public Database database() {
        return requireStarted(database);
    }

    public RedissonClient redisson() {
        return requireStarted(redisson);
    }

    /** This server's id in the leader election: {@code <host>-<pid>}. */
    public String nodeId() {
        return nodeId;
    }

    /** The in-process pid-worker, or {@code null} when {@code worker.enabled} is false. */
    public WorkerPool workers() {
        return workers;
    }

    /** The usage ledger sync (docs/usage-sync.md), or {@code null} when {@code worker.enabled} is false. */
    public UsageSyncService usageSync() {
        return usageSync;
    }

    /** Usage reports: the leader's periodic full scan, on demand on followers (docs/usage-monitoring.md). */
    public UsageMonitor usage() {
        return requireStarted(usage);
    }

    /** The coordination node: election, views, batches. */
    public ClusterMember node() {
        return requireStarted(node);
    }

    /** The last health report (probed every few seconds). */
    public io.pidpool.server.http.HealthCheck.Report health() {
        return requireStarted(health).report();
    }

    private static <T> T requireStarted(T part) {
        if (part == null) {
            throw PidPoolException.illegalState("pid-server is not started");
        }
        return part;
    }

    // ---------------------------------------------------------------- parts

    private ClusterMember buildNode(QuotaProvisioner quota) {
        var zk = config.zookeeper();
        LeaderSettings settings = advice.leaderSettings(LeaderSettings.defaults());
        return ClusterMember.builder()
                .nodeId(nodeId)
                .connectString(zk.connect())
                .cluster(config.cluster())
                .zkAuth(zkAuth)
                .sessionTimeout(Duration.ofMillis(zk.sessionTimeoutMs()))
                // our own client has connected already; a shorter timeout also keeps Curator from
                // warning that it exceeds the session timeout
                .connectionTimeout(Duration.ofMillis(Math.min(zk.connectionTimeoutMs(), zk.sessionTimeoutMs())))
                .repositories(database.repositories(clock))
                .sealer(sealer::seal)
                .ids(ids::nextId)
                .quotaProvisioner(quota)
                .settings(settings)
                .placement(advice.placement(settings))
                .alerts(advice.leaderSink())
                .cooldowns(database.cooldowns())
                .quotaResets(database.quotaResets())
                .clock(clock)
                .build();
    }

    /**
     * The in-process pid-worker (group {@value #WORKER_GROUP}): the built-in {@code pidpool.log}
     * handler plus every {@link TaskHandlerProvider} on the class path, as the standalone worker.
     */
    private WorkerPool startWorkers(Map<String, TaskHandler> own) {
        Map<String, TaskHandler> handlers = new LinkedHashMap<>(own);
        handlers.put(WorkerMain.LOG_TYPE, task -> log.info("task {} [{}] key={}", task.id(), task.type(), task.key()));
        advice.registerHandlers(handlers);
        for (TaskHandlerProvider provider : ServiceLoader.load(TaskHandlerProvider.class)) {
            provider.handlers().forEach((type, handler) -> {
                if (handlers.putIfAbsent(type, handler) != null) {
                    throw PidPoolException.conflict("handlers", "two providers register task type '%s'", type);
                }
            });
        }
        return WorkerPool.builder()
                .curator(curator)
                .cluster(config.cluster())
                .group(WORKER_GROUP)
                .dataSource(database.dataSource())
                .handlers(handlers)
                .clock(clock)
                .build()
                .start();
    }

    private void startNode(ClusterMember started) {
        try {
            started.start();
        } catch (PidPoolException e) {
            throw new PidPoolException(
                    e.code(), "zookeeper.connect", "the coordination node did not start: " + e.getMessage(), e);
        }
    }

    /** Takes a worker-id slot now, so that start-up fails when none is free (32 per cluster). */
    private static void requireIds(ClusterSnowflakeIds ids) {
        try {
            ids.nextId();
        } catch (PidPoolException e) {
            throw new PidPoolException(
                    ErrorCode.UNAVAILABLE, "zookeeper.connect", "no Snowflake worker id: " + e.getMessage(), e);
        }
    }

    /** {@code <host>-<pid>}, trimmed to the characters a node id may have. */
    static String defaultNodeId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (IOException | RuntimeException e) {
            host = "pid-server";
        }
        String clean = host.replaceAll("[^A-Za-z0-9_.-]", "-").replaceAll("^[.]+", "");
        if (clean.isEmpty()) {
            clean = "pid-server";
        }
        if (clean.length() > 40) {
            clean = clean.substring(0, 40);
        }
        return clean + "-" + ProcessHandle.current().pid();
    }
}
