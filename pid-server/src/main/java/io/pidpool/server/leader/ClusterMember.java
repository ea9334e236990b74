package io.pidpool.server.leader;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.NotifySignal;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.EpochFence;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.TreeWatcher;
import io.pidpool.server.zk.ZkScanner;
import io.pidpool.server.zk.ZkSupport;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.SessionConnectionStateErrorPolicy;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordination part of one PidPool server: its ZooKeeper client, its place in the leader election
 * at {@code /leader}, the watchers of {@code /modules} and {@code /notify}, and, while it leads, a
 * {@link LeaderTerm}. Every server runs one; the HTTP layer reads through it and submits batches
 * through it whether or not it leads.
 *
 * <p>The ZooKeeper client uses Curator's {@link SessionConnectionStateErrorPolicy}: a SUSPENDED
 * connection pauses the leader's writes but does not end its leadership; only a LOST session does
 * (docs/design.md §6: "never move anything because of SUSPENDED alone").
 *
 * <p>Concurrency: one serial executor owns every piece of mutable state (the views, the term);
 * Curator's callbacks (latch, watchers, connection state) only enqueue tasks on it. Public methods
 * may be called from any thread; queries are answered by a task on that executor. The lifecycle is
 * an {@link AtomicReference} moved by compare-and-set.
 */
public final class ClusterMember implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMember.class);
    private static final Duration REJOIN_DELAY = Duration.ofSeconds(1);
    /**
     * How long the {@code /modules} watcher waits before it re-reads the whole tree after a
     * reconnection. A node that was cut off (an old leader whose session expired, a follower after a
     * partition) would otherwise scan 100,000 nodes at the very moment its successor starts its term
     * on the same machines; meanwhile its view is not proven current, so if it is elected before the
     * scan is done, its term scans, as every term did before the proof. A leader's own term re-reads
     * the tree at once when it resumes (LeaderTerm.resume).
     */
    static final Duration RESCAN_DELAY = Duration.ofSeconds(3);

    private enum Lifecycle {
        LATENT,
        STARTED,
        CLOSED
    }

    private final AtomicReference<Lifecycle> lifecycle = new AtomicReference<>(Lifecycle.LATENT);
    private final String nodeId;
    private final ZkLayout layout;
    private final LeaderSettings settings;
    private final CuratorFramework client;
    private final ScheduledExecutorService serial;
    private final ZkView view;
    private final NodeContext ctx;
    private final Duration connectTimeout;
    private final ScheduledExecutorService io;
    private final BatchService batches;
    private final QuotaSync quota;
    private final Runnable beforeTerm;
    private final WarmAccounts warm;
    private final Duration rescanDelay;

    // owned by the serial executor
    private volatile LeaderLatch latch;
    private LeaderTerm term;
    private TreeWatcher modulesWatcher;
    private TreeWatcher notifyWatcher;
    private volatile boolean leading;
    /** How the last term of this node started (test hook). */
    private volatile TreeWatcher.Proof lastTermStart;

    private volatile String lastAccountsSource;

    private ClusterMember(Builder b) {
        this.nodeId = b.nodeId;
        this.layout = b.layout;
        this.settings = b.settings;
        this.connectTimeout = b.connectionTimeout;
        this.beforeTerm = b.beforeTerm;
        this.rescanDelay = b.rescanDelay;
        this.client = b.zkAuth
                .configure(
                        CuratorFrameworkFactory.builder()
                                .connectString(b.connectString)
                                .namespace(layout.namespace())
                                .sessionTimeoutMs((int) b.sessionTimeout.toMillis())
                                .connectionTimeoutMs((int) b.connectionTimeout.toMillis())
                                .retryPolicy(new BoundedExponentialBackoffRetry(100, 2_000, 20))
                                .connectionStateErrorPolicy(new SessionConnectionStateErrorPolicy()),
                        layout.namespace())
                .build();
        this.serial = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-node-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        this.view = new ZkView(layout, b.ticker);
        var scanner = new ZkScanner(() -> ZkSupport.zooKeeper(client), layout.namespace());
        this.io = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-io-" + nodeId);
            t.setDaemon(true);
            return t;
        });
        this.quota = new QuotaSync(b.quotaProvisioner, b.quotaResets, b.quotaRetryDelay, nodeId);
        var store = new RepositoryLeaderStore(b.repositories, b.cooldowns);
        this.warm = new WarmAccounts(store, b.warmAccountsInterval, b.ticker, nodeId);
        this.ctx = new NodeContext(
                nodeId,
                client,
                layout,
                settings,
                store,
                warm,
                b.repositories,
                quota,
                b.quotaReconcileInterval,
                b.batchHook,
                view,
                serial,
                scanner,
                b.placement,
                b.alerts,
                b.ticker,
                b.clock,
                b.zkAuth.acl(),
                this::proveViewCurrent);
        this.batches = new BatchService(
                b.repositories, b.sealer, b.ids, b.clock, this::raise, io, settings.batchPollInterval());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Connects, starts watching and joins the election. Returns once connected. */
    public void start() {
        requireState(
                lifecycle.compareAndSet(Lifecycle.LATENT, Lifecycle.STARTED), "node %s was already started", nodeId);
        client.start();
        try {
            if (!client.blockUntilConnected((int) connectTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw PidPoolException.unavailable("could not connect to ZooKeeper within " + connectTimeout, null);
            }
            client.createContainers(layout.modules());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while connecting", e);
        } catch (PidPoolException e) {
            throw e;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not prepare " + layout.modules(), e);
        }
        client.getConnectionStateListenable().addListener((c, newState) -> onConnectionState(newState), serial);
        call(() -> {
            // the view covers a notification if it already holds the node at that zxid or later (the
            // leader's own writes are replayed from their results): no read for those
            modulesWatcher =
                    new TreeWatcher(client, layout.modules(), false, serial, this::observed, () -> {}, (path, zxid) -> {
                        ZkView.Entry entry = view.node(path);
                        return entry != null && entry.stat().mzxid() >= zxid;
                    });
            modulesWatcher.deferRescans(rescanDelay).start();
            notifyWatcher = new TreeWatcher(client, layout.notifyNode(), true, serial, this::notified, () -> {});
            notifyWatcher.start();
            warm.start();
            joinElection();
            return null;
        });
    }

    /** The serial executor, at a term's start: whether the watched view is current (else the term scans). */
    private TreeWatcher.Proof proveViewCurrent(Duration timeout) {
        return modulesWatcher == null ? TreeWatcher.Proof.unproven("no watcher") : modulesWatcher.proveCurrent(timeout);
    }

    private void observed(NodeEvent event) {
        view.replay(event);
        if (term != null) {
            term.requestPass();
        }
    }

    private void notified(NodeEvent event) {
        if (!(event instanceof NodeEvent.Upsert upsert)) {
            return;
        }
        NotifySignal signal;
        try {
            signal = NotifySignal.decode(upsert.data());
        } catch (PidPoolException e) {
            log.warn("{} holds junk ({}); relying on polls", layout.notifyNode(), e.getMessage());
            return;
        }
        batches.signalled();
        if (term != null && signal.phase() == NotifySignal.Phase.DEALING) {
            term.pollBatches();
        }
    }

    /** A follower's (unfenced) notification: "a batch is waiting". Creates {@code /notify} if needed. */
    private void raise(NotifySignal signal) {
        try {
            try {
                client.setData().forPath(layout.notifyNode(), signal.encode());
            } catch (KeeperException.NoNodeException e) {
                client.create().creatingParentContainersIfNeeded().forPath(layout.notifyNode(), signal.encode());
            }
        } catch (KeeperException.NodeExistsException raced) {
            raise(signal);
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not write " + layout.notifyNode(), e);
        }
    }

    private void joinElection() {
        latch = new LeaderLatch(client, layout.leader(), nodeId);
        LeaderLatch mine = latch;
        latch.addListener(
                new LeaderLatchListener() {
                    @Override
                    public void isLeader() {
                        if (latch == mine) {
                            becomeLeader();
                        }
                    }

                    @Override
                    public void notLeader() {
                        if (latch == mine) {
                            endTerm("leadership lost");
                        }
                    }
                },
                serial);
        try {
            latch.start();
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not join the election", e);
        }
    }

    private void becomeLeader() {
        if (lifecycle.get() != Lifecycle.STARTED || term != null || !latch.hasLeadership()) {
            return;
        }
        LeaderTerm candidate = new LeaderTerm(ctx, cause -> stepDown(cause.getMessage()));
        term = candidate;
        try {
            beforeTerm.run();
            try {
                candidate.begin();
            } finally {
                lastTermStart = candidate.viewProof();
                lastAccountsSource = candidate.accountsSource();
            }
            leading = true;
        } catch (RuntimeException e) {
            log.error("{} could not take up leadership: {}", nodeId, e.getMessage(), e);
            stepDown("election steps failed: " + e.getMessage());
        }
    }

    private void endTerm(String why) {
        leading = false;
        if (term != null) {
            log.info("{}: {}", nodeId, why);
            term.close();
            term = null;
            warm.resume();
        }
    }

    /** Ends the term and leaves the election, then joins again at the back of the queue. */
    private void stepDown(String why) {
        endTerm("stepping down: " + why);
        if (lifecycle.get() != Lifecycle.STARTED) {
            return;
        }
        try {
            LeaderLatch old = latch;
            latch = null;
            old.close();
        } catch (Exception e) {
            log.warn("{} could not leave the election cleanly: {}", nodeId, e.getMessage());
        }
        // not at once: if the cause persists (say the database is down), every attempt would bump the
        // epoch again; a pause lets another node try first
        serial.schedule(
                () -> {
                    if (lifecycle.get() == Lifecycle.STARTED && latch == null) {
                        joinElection();
                    }
                },
                REJOIN_DELAY.toMillis(),
                TimeUnit.MILLISECONDS);
    }

    private void onConnectionState(ConnectionState newState) {
        log.info("{}: ZooKeeper connection {}", nodeId, newState);
        switch (newState) {
            case SUSPENDED -> {
                if (term != null) {
                    term.suspend();
                }
            }
            case RECONNECTED -> {
                if (term != null) {
                    if (ZkSupport.sessionId(client) != term.token().sessionId()) {
                        stepDown("the session changed");
                    } else {
                        term.resume();
                    }
                }
            }
            case LOST -> endTerm("ZooKeeper session lost");
            default -> {}
        }
    }

    // ---------------------------------------------------------------- queries

    public String nodeId() {
        return nodeId;
    }

    public ZkLayout layout() {
        return layout;
    }

    /** Whether this node currently leads and has finished its election steps. */
    public boolean isLeader() {
        return leading;
    }

    /** The epoch of this node's current term, or {@link Epoch#NONE} when it does not lead. */
    public Epoch epoch() {
        return call(() -> term == null ? Epoch.NONE : term.epoch());
    }

    /** The grace period of the current term, or null when not leading. */
    public Duration grace() {
        return call(() -> term == null ? null : term.grace());
    }

    /** Operator batches: submit on any server, await the outcome, read them back. */
    public BatchService batches() {
        return batches;
    }

    /** Leader, epoch and members of the cluster as this node sees them. */
    public ReadModel.Cluster cluster() {
        String leaderId = "";
        List<String> members = new ArrayList<>();
        try {
            LeaderLatch current = call(() -> latch);
            if (current != null) {
                Participant leader = current.getLeader();
                leaderId = leader.isLeader() ? leader.getId() : "";
                for (Participant p : current.getParticipants()) {
                    members.add(p.getId());
                }
            }
        } catch (PidPoolException e) {
            throw e;
        } catch (Exception e) {
            throw PidPoolException.unavailable("could not read the election", e);
        }
        Epoch epoch = EpochFence.read(client, layout.epoch());
        return new ReadModel.Cluster(
                nodeId,
                leading,
                leaderId,
                epoch,
                List.copyOf(members),
                client.getZookeeperClient().isConnected());
    }

    /** Every module: configuration, PID counts, instances and what they hold. */
    public List<ReadModel.Module> modules() {
        LeaderDatabase.Snapshot db = ctx.store().load();
        return call(() -> ReadModel.modules(db, view));
    }

    /** One module, or NOT_FOUND. */
    public ReadModel.Module module(ModuleKey key) {
        return modules().stream()
                .filter(m -> m.key().equals(key))
                .findFirst()
                .orElseThrow(() -> PidPoolException.notFound("module", "no module %s", key));
    }

    /** Accounts with their module, instance and node state; {@code module}/{@code state} null = any. */
    public List<ReadModel.Pid> pids(ModuleKey module, PidState state) {
        LeaderDatabase.Snapshot db = ctx.store().load();
        return call(() -> ReadModel.pids(db.pids(), view, module, state));
    }

    /** The account version of this follower's warm copy ({@link WarmAccounts}), -1 if it has none (tests). */
    long warmAccountsVersion() {
        return warm.version();
    }

    /** This node's ZooKeeper client (for tests and the runtime's health checks). */
    public CuratorFramework curator() {
        return client;
    }

    /** Runs {@code query} on the serial executor and waits for its answer. */
    <T> T call(Callable<T> query) {
        try {
            return serial.submit(query).get(settings.zkTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted", e);
        } catch (TimeoutException e) {
            throw PidPoolException.unavailable("node " + nodeId + " did not answer in time", e);
        } catch (RejectedExecutionException e) {
            throw new PidPoolException(ErrorCode.UNAVAILABLE, "node " + nodeId + " is closed");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PidPoolException p) {
                throw p;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** Test hook: the fenced writer of the current term, or null. */
    FencedWriter currentWriter() {
        return call(() -> term == null ? null : term.writer());
    }

    /** Test hook: a one-line summary of the ZooKeeper view and the term. */
    String describeForTests() {
        return call(() -> {
            var counts = new java.util.TreeMap<String, Integer>();
            for (ZkView.PidEntry e : view.allPidNodes()) {
                String key = e.holder().instance() + ":"
                        + (e.node() == null
                                ? "MALFORMED"
                                : e.node().state() + (e.node().hasError() ? "!" : ""));
                counts.merge(key, 1, Integer::sum);
            }
            return "leading=" + leading + " writesInFlight="
                    + (term == null ? -1 : term.state().writesInFlight()) + " nodes=" + counts;
        });
    }

    /** Test hook: PIDs in cooldown with their end on the node's ticker. */
    Map<String, Long> cooldownsForTests() {
        return call(() -> term == null ? Map.of() : Map.copyOf(term.state().cooldowns()));
    }

    /**
     * Test hook: how this node's last term started: proven current (the scan skipped) or the reason it
     * scanned; null if it never got that far.
     */
    TreeWatcher.Proof lastTermStart() {
        return lastTermStart;
    }

    /** Test hook: where this node's last term took its accounts from (full load or warm copy). */
    String lastAccountsSource() {
        return lastAccountsSource;
    }

    /** Test hook: full scans of {@code /modules} this node's watcher completed. */
    long watcherScans() {
        return call(() -> modulesWatcher == null ? 0L : modulesWatcher.scans());
    }

    /** Test hook: the quota provisioning of this node. */
    QuotaSync quotaSync() {
        return quota;
    }

    /** Test hook: reconciliation passes of the current term so far. */
    long passes() {
        return call(() -> term == null ? 0L : term.passes());
    }

    /** Test hook: run a reconciliation pass now (level-triggered repair), as the schedule would. */
    void reconcileNow() {
        call(() -> {
            if (term != null) {
                term.reload();
            }
            return null;
        });
    }

    // ---------------------------------------------------------------- lifecycle

    /**
     * Leaves the election (a successor takes over), stops watching and disconnects. Work in progress
     * on the serial executor is interrupted: a batch being applied rolls back and is left to the
     * successor.
     */
    @Override
    public void close() {
        if (lifecycle.getAndSet(Lifecycle.CLOSED) != Lifecycle.STARTED) {
            return;
        }
        leading = false;
        LeaderLatch current = latch;
        if (current != null) {
            try {
                current.close(); // from this thread: a successor may be elected at once
            } catch (Exception e) {
                log.warn("{} could not leave the election cleanly: {}", nodeId, e.getMessage());
            }
        }
        serial.shutdownNow();
        try {
            if (!serial.awaitTermination(settings.zkTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("{}: the serial executor did not stop in time", nodeId);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // the executor is gone: nothing else touches its state any more
        endTerm("closed");
        if (modulesWatcher != null) {
            modulesWatcher.close();
        }
        if (notifyWatcher != null) {
            notifyWatcher.close();
        }
        batches.close();
        quota.close();
        warm.close();
        io.shutdownNow();
        client.close();
    }

    /** Builds a {@link ClusterMember}. */
    public static final class Builder {
        private String nodeId;
        private String connectString;
        private ZkLayout layout = new ZkLayout(ZkLayout.DEFAULT_CLUSTER);
        private Duration sessionTimeout = Duration.ofSeconds(10);
        private Duration connectionTimeout = Duration.ofSeconds(10);
        private LeaderSettings settings = LeaderSettings.defaults();
        private Repositories repositories;
        private Function<String, SealedSecret> sealer;
        private ZkAuth zkAuth = ZkAuth.none();
        private LongSupplier ids;
        private QuotaProvisioner quotaProvisioner = QuotaProvisioner.logging();
        private Duration quotaReconcileInterval = Duration.ofSeconds(30);
        private Duration quotaRetryDelay = Duration.ofSeconds(1);
        private Runnable batchHook = () -> {};
        private Runnable beforeTerm = () -> {};
        private Function<Duration, PlacementPolicy> placement;
        private AlertSink alerts = AlertSink.logging();
        private io.pidpool.core.port.CooldownRepository cooldowns;
        private QuotaResetLog quotaResets = QuotaResetLog.none();
        private Ticker ticker = Ticker.system();
        private Clock clock = Clock.systemUTC();
        private Duration warmAccountsInterval = Duration.ofMillis(250);
        private Duration rescanDelay = RESCAN_DELAY;

        private Builder() {}

        /** This server's name in the election (shown as the leader id). */
        public Builder nodeId(String value) {
            this.nodeId = Names.requireToken(value, "nodeId");
            return this;
        }

        public Builder connectString(String value) {
            requireArgument(
                    value != null && !value.isBlank(), "zookeeper.connect", "a ZooKeeper connect string is required");
            this.connectString = value;
            return this;
        }

        public Builder cluster(String cluster) {
            this.layout = new ZkLayout(cluster);
            return this;
        }

        /** The requested session timeout; the grace period uses the negotiated one. */
        public Builder sessionTimeout(Duration value) {
            this.sessionTimeout = requireNonNull(value, "sessionTimeout");
            return this;
        }

        public Builder connectionTimeout(Duration value) {
            this.connectionTimeout = requireNonNull(value, "connectionTimeout");
            return this;
        }

        public Builder settings(LeaderSettings value) {
            this.settings = requireNonNull(value, "settings");
            return this;
        }

        /** The database (Jdbi adapters in production). */
        public Builder repositories(Repositories value) {
            this.repositories = requireNonNull(value, "repositories");
            return this;
        }

        /**
         * ZooKeeper authentication and the ACL of every node the node (and, leading, its fenced
         * writer) creates; default none (open ACL).
         */
        public Builder zkAuth(ZkAuth value) {
            this.zkAuth = requireNonNull(value, "zkAuth");
            return this;
        }

        /** Seals operator-supplied passwords before they are stored, e.g. {@code SecretSealer::seal}. */
        public Builder sealer(Function<String, SealedSecret> value) {
            this.sealer = requireNonNull(value, "sealer");
            return this;
        }

        /** Unique ids for batches and audit rows, e.g. {@code SnowflakeIds::nextId}. */
        public Builder ids(LongSupplier value) {
            this.ids = requireNonNull(value, "ids");
            return this;
        }

        /**
         * Where the leader provisions quota (limits on ADD/UPDATE/DELETE, RESET_QUOTA, reconciliation),
         * e.g. {@code io.pidpool.server.redis.RedisQuotaProvisioner}. Default {@link
         * QuotaProvisioner#logging()}: nothing is provisioned and no PID grants anything.
         */
        public Builder quotaProvisioner(QuotaProvisioner value) {
            this.quotaProvisioner = requireNonNull(value, "quotaProvisioner");
            return this;
        }

        /**
         * How often the leader compares every PID's limit in the database with the provisioner's and
         * writes the differences (also once at the start of every term). Default 30 s.
         */
        public Builder quotaReconcileInterval(Duration value) {
            requireArgument(
                    value != null && !value.isZero() && !value.isNegative(), "quotaReconcileInterval", "must be > 0");
            this.quotaReconcileInterval = value;
            return this;
        }

        /** How soon a failed provisioning call is tried again. Default 1 s. */
        public Builder quotaRetryDelay(Duration value) {
            requireArgument(value != null && !value.isZero() && !value.isNegative(), "quotaRetryDelay", "must be > 0");
            this.quotaRetryDelay = value;
            return this;
        }

        /** Test hook: runs inside each batch's transaction, after its row is locked. */
        Builder batchHook(Runnable value) {
            this.batchHook = requireNonNull(value, "batchHook");
            return this;
        }

        /** Test hook: how long the {@code /modules} watcher defers its re-read after a reconnection. */
        Builder rescanDelay(Duration value) {
            this.rescanDelay = requireNonNull(value, "rescanDelay");
            return this;
        }

        /** Test hook: runs on the serial executor after winning the election, before the term's first step. */
        Builder beforeTerm(Runnable value) {
            this.beforeTerm = requireNonNull(value, "beforeTerm");
            return this;
        }

        /**
         * Makes the placement policy of each term from that term's grace period. Default: the core
         * allocation planner with {@link LeaderSettings#rebalanceDelay()}.
         */
        public Builder placement(Function<Duration, PlacementPolicy> value) {
            this.placement = requireNonNull(value, "placement");
            return this;
        }

        /**
         * Where RESET_QUOTA is recorded with the batch (e.g. {@code Database.quotaResets()}), so the
         * quota reconciliation re-applies a reset Redis never got (docs/quota.md §6a). Default: none.
         */
        public Builder quotaResets(QuotaResetLog value) {
            this.quotaResets = requireNonNull(value, "quotaResets");
            return this;
        }

        /**
         * Where cooldown end times are stored (e.g. {@code Database.cooldowns()}), so that a new
         * leader keeps them; default none: a new leader starts every cooldown over.
         */
        public Builder cooldowns(io.pidpool.core.port.CooldownRepository value) {
            this.cooldowns = value;
            return this;
        }

        public Builder alerts(AlertSink value) {
            this.alerts = requireNonNull(value, "alerts");
            return this;
        }

        public Builder ticker(Ticker value) {
            this.ticker = requireNonNull(value, "ticker");
            return this;
        }

        public Builder clock(Clock value) {
            this.clock = requireNonNull(value, "clock");
            return this;
        }

        /**
         * How often a follower brings its warm copy of the accounts up to date ({@link WarmAccounts}:
         * one read of the account version when nothing changed); zero: keep none, a new leader loads
         * every account. Default 250 ms.
         */
        public Builder warmAccountsInterval(Duration value) {
            this.warmAccountsInterval = requireNonNull(value, "warmAccountsInterval");
            return this;
        }

        public ClusterMember build() {
            requireNonNull(nodeId, "nodeId");
            requireNonNull(connectString, "zookeeper.connect");
            requireNonNull(repositories, "repositories");
            requireNonNull(sealer, "sealer");
            requireNonNull(ids, "ids");
            if (placement == null) {
                LeaderSettings s = settings;
                placement = grace ->
                        new PlannerPlacement(PlannerPolicy.defaults(grace).withRebalanceDelay(s.rebalanceDelay()));
            }
            return new ClusterMember(this);
        }
    }
}
