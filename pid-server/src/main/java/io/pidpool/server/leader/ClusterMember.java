package io.pidpool.server.leader;

import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.protocol.NotifySignal;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.server.zk.FencedWriter;
import io.pidpool.server.zk.NodeEvent;
import io.pidpool.server.zk.TreeWatcher;
import io.pidpool.server.zk.ZkScanner;
import io.pidpool.server.zk.ZkSupport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
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
 *
 * <p>Parts: {@link LeaderElection} (the latch and the life of each term), {@link MemberQueries} (what
 * it answers the HTTP layer), {@link ClusterMemberBuilder} (configuration); this class wires them,
 * connects, watches and closes.
 */
public final class ClusterMember implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ClusterMember.class);
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
    private final WarmAccounts warm;
    private final Duration rescanDelay;

    // owned by the serial executor
    private final LeaderElection election;
    private final MemberQueries queries;
    private TreeWatcher modulesWatcher;
    private TreeWatcher notifyWatcher;

    ClusterMember(ClusterMemberBuilder b) {
        this.nodeId = b.nodeId;
        this.layout = b.layout;
        this.settings = b.settings;
        this.connectTimeout = b.connectionTimeout;
        this.rescanDelay = b.rescanDelay;
        this.client = b.zkAuth
                .configure(
                        CuratorFrameworkFactory.builder()
                                .connectString(b.connectString)
                                .namespace(layout.namespace())
                                .sessionTimeoutMs((int) b.sessionTimeout.toMillis())
                                .connectionTimeoutMs((int) b.connectionTimeout.toMillis())
                                .retryPolicy(new BoundedExponentialBackoffRetry(100, 2_000, 20))
                                .connectionStateErrorPolicy(new SessionConnectionStateErrorPolicy())
                                .zkClientConfig(ZkSupport.memberClientConfig()),
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
        this.election = new LeaderElection(ctx, b.beforeTerm, () -> lifecycle.get() == Lifecycle.STARTED);
        this.queries = new MemberQueries(ctx, election);
        this.batches = new BatchService(
                b.repositories, b.sealer, b.ids, b.clock, this::recorded, io, settings.batchPollInterval());
    }

    public static ClusterMemberBuilder builder() {
        return new ClusterMemberBuilder();
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
        client.getConnectionStateListenable()
                .addListener((c, newState) -> election.onConnectionState(newState), serial);
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
            election.join();
            return null;
        });
    }

    /** The serial executor, at a term's start: whether the watched view is current (else the term scans). */
    private TreeFollower.Proof proveViewCurrent(Duration timeout) {
        return modulesWatcher == null
                ? TreeFollower.Proof.unproven("no watcher")
                : modulesWatcher.proveCurrent(timeout);
    }

    private void observed(NodeEvent event) {
        view.replay(event);
        LeaderTerm term = election.term();
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
        LeaderTerm term = election.term();
        if (term != null && signal.phase() == NotifySignal.Phase.DEALING) {
            term.pollBatches();
        }
    }

    /**
     * This member recorded {@code batch}. When it leads, its term applies the batch at once, instead of
     * after its own notification has come back (a write and a read of {@code /notify} later), and
     * without reading back what it has in hand; then {@code /notify} wakes the other members.
     */
    private void recorded(BatchRecord batch) {
        try {
            serial.execute(() -> {
                LeaderTerm term = election.term();
                if (term != null) {
                    term.guarded(() -> term.pollBatches(batch));
                }
            });
        } catch (RejectedExecutionException closed) {
            // shutting down: the batch waits for the next leader's poll
        }
        raise(new NotifySignal(NotifySignal.Phase.DEALING, batch.id()));
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

    // ---------------------------------------------------------------- queries

    public String nodeId() {
        return nodeId;
    }

    public ZkLayout layout() {
        return layout;
    }

    /** Whether this node currently leads and has finished its election steps. */
    public boolean isLeader() {
        return election.isLeading();
    }

    /** The epoch of this node's current term, or {@link Epoch#NONE} when it does not lead. */
    public Epoch epoch() {
        return queries.epoch();
    }

    /** The grace period of the current term, or null when not leading. */
    public Duration grace() {
        return queries.grace();
    }

    /** Operator batches: submit on any server, await the outcome, read them back. */
    public BatchService batches() {
        return batches;
    }

    /** Leader, epoch and members of the cluster as this node sees them. */
    public ReadModel.Cluster cluster() {
        return queries.cluster();
    }

    /** Every module: configuration, PID counts, instances and what they hold. */
    public List<ReadModel.Module> modules() {
        return queries.modules();
    }

    /** One module, or NOT_FOUND. */
    public ReadModel.Module module(ModuleKey key) {
        return queries.module(key);
    }

    /** Accounts with their module, instance and node state; {@code module}/{@code state} null = any. */
    public List<ReadModel.Pid> pids(ModuleKey module, PidState state) {
        return queries.pids(module, state);
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
        return queries.call(query);
    }

    /** Test hook: the fenced writer of the current term, or null. */
    FencedWriter currentWriter() {
        return call(() -> election.term() == null ? null : election.term().writer());
    }

    /** Test hook: a one-line summary of the ZooKeeper view and the term. */
    String describeForTests() {
        return queries.describe();
    }

    /** Test hook: PIDs in cooldown with their end on the node's ticker. */
    Map<String, Long> cooldownsForTests() {
        return call(() -> election.term() == null
                ? Map.of()
                : Map.copyOf(election.term().state().cooldowns()));
    }

    /**
     * Test hook: how this node's last term started: proven current (the scan skipped) or the reason it
     * scanned; null if it never got that far.
     */
    TreeFollower.Proof lastTermStart() {
        return election.lastTermStart();
    }

    /** Test hook: where this node's last term took its accounts from (full load or warm copy). */
    String lastAccountsSource() {
        return election.lastAccountsSource();
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
        return call(() -> election.term() == null ? 0L : election.term().passes());
    }

    /** Test hook: run a reconciliation pass now (level-triggered repair), as the schedule would. */
    void reconcileNow() {
        call(() -> {
            if (election.term() != null) {
                election.term().reload();
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
        election.leave();
        serial.shutdownNow();
        try {
            if (!serial.awaitTermination(settings.zkTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn("{}: the serial executor did not stop in time", nodeId);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // the executor is gone: nothing else touches its state any more
        election.endTerm("closed");
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
}
