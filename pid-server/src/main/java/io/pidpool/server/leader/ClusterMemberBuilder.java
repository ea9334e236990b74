package io.pidpool.server.leader;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.allocation.PlannerPolicy;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.ZkLayout;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.LongSupplier;

/** Builds a {@link ClusterMember}. */
public final class ClusterMemberBuilder {
    String nodeId;
    String connectString;
    ZkLayout layout = new ZkLayout(ZkLayout.DEFAULT_CLUSTER);
    Duration sessionTimeout = Duration.ofSeconds(10);
    Duration connectionTimeout = Duration.ofSeconds(10);
    LeaderSettings settings = LeaderSettings.defaults();
    Repositories repositories;
    Function<String, SealedSecret> sealer;
    ZkAuth zkAuth = ZkAuth.none();
    LongSupplier ids;
    QuotaProvisioner quotaProvisioner = QuotaProvisioner.logging();
    Duration quotaReconcileInterval = Duration.ofSeconds(30);
    Duration quotaRetryDelay = Duration.ofSeconds(1);
    Runnable batchHook = () -> {};
    Runnable beforeTerm = () -> {};
    Function<Duration, PlacementPolicy> placement;
    AlertSink alerts = AlertSink.logging();
    io.pidpool.core.port.CooldownRepository cooldowns;
    QuotaResetLog quotaResets = QuotaResetLog.none();
    Ticker ticker = Ticker.system();
    Clock clock = Clock.systemUTC();
    Duration warmAccountsInterval = Duration.ofMillis(250);
    Duration rescanDelay = ClusterMember.RESCAN_DELAY;

    ClusterMemberBuilder() {}

    /** This server's name in the election (shown as the leader id). */
    public ClusterMemberBuilder nodeId(String value) {
        this.nodeId = Names.requireToken(value, "nodeId");
        return this;
    }

    public ClusterMemberBuilder connectString(String value) {
        requireArgument(
                value != null && !value.isBlank(), "zookeeper.connect", "a ZooKeeper connect string is required");
        this.connectString = value;
        return this;
    }

    public ClusterMemberBuilder cluster(String cluster) {
        this.layout = new ZkLayout(cluster);
        return this;
    }

    /** The requested session timeout; the grace period uses the negotiated one. */
    public ClusterMemberBuilder sessionTimeout(Duration value) {
        this.sessionTimeout = requireNonNull(value, "sessionTimeout");
        return this;
    }

    public ClusterMemberBuilder connectionTimeout(Duration value) {
        this.connectionTimeout = requireNonNull(value, "connectionTimeout");
        return this;
    }

    public ClusterMemberBuilder settings(LeaderSettings value) {
        this.settings = requireNonNull(value, "settings");
        return this;
    }

    /** The database (Jdbi adapters in production). */
    public ClusterMemberBuilder repositories(Repositories value) {
        this.repositories = requireNonNull(value, "repositories");
        return this;
    }

    /**
     * ZooKeeper authentication and the ACL of every node the node (and, leading, its fenced
     * writer) creates; default none (open ACL).
     */
    public ClusterMemberBuilder zkAuth(ZkAuth value) {
        this.zkAuth = requireNonNull(value, "zkAuth");
        return this;
    }

    /** Seals operator-supplied passwords before they are stored, e.g. {@code SecretSealer::seal}. */
    public ClusterMemberBuilder sealer(Function<String, SealedSecret> value) {
        this.sealer = requireNonNull(value, "sealer");
        return this;
    }

    /** Unique ids for batches and audit rows, e.g. {@code SnowflakeIds::nextId}. */
    public ClusterMemberBuilder ids(LongSupplier value) {
        this.ids = requireNonNull(value, "ids");
        return this;
    }

    /**
     * Where the leader provisions quota (limits on ADD/UPDATE/DELETE, RESET_QUOTA, reconciliation),
     * e.g. {@code io.pidpool.server.redis.RedisQuotaProvisioner}. Default {@link
     * QuotaProvisioner#logging()}: nothing is provisioned and no PID grants anything.
     */
    public ClusterMemberBuilder quotaProvisioner(QuotaProvisioner value) {
        this.quotaProvisioner = requireNonNull(value, "quotaProvisioner");
        return this;
    }

    /**
     * How often the leader compares every PID's limit in the database with the provisioner's and
     * writes the differences (also once at the start of every term). Default 30 s.
     */
    public ClusterMemberBuilder quotaReconcileInterval(Duration value) {
        requireArgument(
                value != null && !value.isZero() && !value.isNegative(), "quotaReconcileInterval", "must be > 0");
        this.quotaReconcileInterval = value;
        return this;
    }

    /** How soon a failed provisioning call is tried again. Default 1 s. */
    public ClusterMemberBuilder quotaRetryDelay(Duration value) {
        requireArgument(value != null && !value.isZero() && !value.isNegative(), "quotaRetryDelay", "must be > 0");
        this.quotaRetryDelay = value;
        return this;
    }

    /** Test hook: runs inside each batch's transaction, after its row is locked. */
    ClusterMemberBuilder batchHook(Runnable value) {
        this.batchHook = requireNonNull(value, "batchHook");
        return this;
    }

    /** Test hook: how long the {@code /modules} watcher defers its re-read after a reconnection. */
    ClusterMemberBuilder rescanDelay(Duration value) {
        this.rescanDelay = requireNonNull(value, "rescanDelay");
        return this;
    }

    /** Test hook: runs on the serial executor after winning the election, before the term's first step. */
    ClusterMemberBuilder beforeTerm(Runnable value) {
        this.beforeTerm = requireNonNull(value, "beforeTerm");
        return this;
    }

    /**
     * Makes the placement policy of each term from that term's grace period. Default: the core
     * allocation planner with {@link LeaderSettings#rebalanceDelay()}.
     */
    public ClusterMemberBuilder placement(Function<Duration, PlacementPolicy> value) {
        this.placement = requireNonNull(value, "placement");
        return this;
    }

    /**
     * Where RESET_QUOTA is recorded with the batch (e.g. {@code Database.quotaResets()}), so the
     * quota reconciliation re-applies a reset Redis never got (docs/quota.md §6a). Default: none.
     */
    public ClusterMemberBuilder quotaResets(QuotaResetLog value) {
        this.quotaResets = requireNonNull(value, "quotaResets");
        return this;
    }

    /**
     * Where cooldown end times are stored (e.g. {@code Database.cooldowns()}), so that a new
     * leader keeps them; default none: a new leader starts every cooldown over.
     */
    public ClusterMemberBuilder cooldowns(io.pidpool.core.port.CooldownRepository value) {
        this.cooldowns = value;
        return this;
    }

    public ClusterMemberBuilder alerts(AlertSink value) {
        this.alerts = requireNonNull(value, "alerts");
        return this;
    }

    public ClusterMemberBuilder ticker(Ticker value) {
        this.ticker = requireNonNull(value, "ticker");
        return this;
    }

    public ClusterMemberBuilder clock(Clock value) {
        this.clock = requireNonNull(value, "clock");
        return this;
    }

    /**
     * How often a follower brings its warm copy of the accounts up to date ({@link WarmAccounts}:
     * one read of the account version when nothing changed); zero: keep none, a new leader loads
     * every account. Default 250 ms.
     */
    public ClusterMemberBuilder warmAccountsInterval(Duration value) {
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
            placement =
                    grace -> new PlannerPlacement(PlannerPolicy.defaults(grace).withRebalanceDelay(s.rebalanceDelay()));
        }
        return new ClusterMember(this);
    }
}
