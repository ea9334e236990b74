package io.pidpool.client;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.ClientSettings;
import io.pidpool.client.internal.DefaultPidClient;
import io.pidpool.client.internal.RedisOptions;
import io.pidpool.client.internal.SealerSecretOpener;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.client.internal.zk.ZkSessions;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.port.Ticker;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.ZkLayout;
import io.pidpool.core.secret.SecretSealer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.LongSupplier;
import org.redisson.api.RedissonClient;

/**
 * The SDK a business server embeds to receive its share of PIDs (docs/design.md §7).
 *
 * <pre>{@code
 * PidClient client = PidClient.builder()
 *     .connectString("127.0.0.1:2181")
 *     .cluster("default")
 *     .module("fin#risk#scorer")
 *     .redisAddress("redis://127.0.0.1:6379")
 *     .secretKeys(Map.of("k2025", base64AesKey))  // or .secretKey(...), or .secretOpener(...)
 *     .listener(listener)
 *     .build();
 * client.start();                       // returns once registered
 * Set<String> held = client.heldPids();
 * client.close();                       // revokes all (onRevoked), then leaves
 * }</pre>
 *
 * <p><b>What it does.</b> {@link #start()} opens a ZooKeeper session, registers this instance under
 * {@code /modules/<module>/<instance>} (an ephemeral node) and follows the leader's instructions in
 * its PID nodes, calling the {@link PidListener} and acknowledging each instruction after the
 * listener returned (docs/design.md §4). It keeps doing so across reconnects and session loss (a new
 * session registers as a new instance) until {@link #close()}.
 *
 * <p><b>Exclusive hold.</b> The client revokes every PID ({@code onRevoked}) as soon as it can no
 * longer prove that its ZooKeeper session is alive: when the connection is SUSPENDED, when its lease
 * (last ZooKeeper reply + 2T/3 − margin) runs out, or when the process was paused for more than T/3.
 * It takes the PIDs up again ({@code onAssigned}) once the same session is confirmed alive. {@link
 * #heldPids()} checks the lease on every call.
 *
 * <p><b>Thread safety.</b> All methods are thread-safe. {@link #heldPids()}, {@link #state()} and
 * {@link #registration()} never block. {@link #start()} and {@link #close()} block (each with a
 * timeout) and must not be called from a listener callback.
 *
 * <p><b>End of the JVM.</b> The SDK's threads never keep a JVM alive, and by default ({@link
 * Builder#closeOnJvmExit}) a shutdown hook runs {@link #close()}, so a JVM that ends without it still
 * logs out and hands its PIDs back at once. Metrics: {@link Builder#meterRegistry}.
 *
 * <p><b>Quota.</b> With {@link Builder#redisAddress} (or {@link Builder#redisson}) the client also
 * opens the Redis quota ledger: {@link #tryAcquire} deducts commands of a held PID atomically in Redis
 * (docs/quota.md) and {@link #refund} gives them back. Deduction ids are Snowflake ids from a worker-id
 * slot the client holds in ZooKeeper (on a ZooKeeper session of its own). A permit is granted only
 * while the hold is provably valid, the same check as {@link #heldPids()}. Without a Redis address both
 * throw {@link PidPoolException} ({@code ILLEGAL_STATE}).
 *
 * <p><b>One file.</b> This is the SDK's public contract, the interface and its {@link Builder}, and
 * most of its length is their javadoc (every method's failures, every option's bounds and default);
 * it stays one file so that a user reads the whole contract in one place. The code is internal.
 */
public interface PidClient extends AutoCloseable {

    /** The client's life cycle, as observed from outside. */
    enum State {
        /** Built, not started. */
        LATENT,
        /** Connecting to ZooKeeper or creating the instance node (again, after a session was lost). */
        REGISTERING,
        /** Registered on a live session; holds whatever the leader assigned. */
        REGISTERED,
        /**
         * Registered, but the session is not provably alive (connection suspended, lease expired or
         * process paused): every PID has been revoked and none is granted until it is.
         */
        SUSPENDED,
        /** Closed; cannot be restarted. */
        CLOSED
    }

    static Builder builder() {
        return new Builder();
    }

    /**
     * Connects and registers this instance; returns once the instance node exists (PIDs arrive after
     * the leader answered). Throws {@link PidPoolException} with {@code UNAVAILABLE} if that does not
     * happen within the start timeout; the client is then closed. May be called once.
     */
    void start();

    /**
     * The PIDs this instance may use right now: those whose {@code onAssigned} returned and whose
     * {@code onRevoked} has not been called. Empty when the lease check fails (no ZooKeeper reply on
     * this client's session within the last 2T/3 − margin) or the connection is suspended. Never
     * blocks; the returned set is an immutable snapshot.
     */
    Set<String> heldPids();

    /**
     * A held PID with at least {@code commands} commands left this month, deducted atomically in
     * Redis; empty when no held PID has that much left, or when the hold is not provably valid right
     * now (connection SUSPENDED, lease expired, process paused: the check of {@link #heldPids()}, made
     * before the deduction is sent and again after Redis granted it; a deduction granted while the hold
     * was lost is given back and not returned). Which held PID: the one with the most left, as far as
     * the client knows; the Redis script decides. Thread-safe; one Redis round trip per PID tried
     * (at most 3). Waits for Redis at most {@link Builder#acquireTimeout} (default 1 s); while Redis
     * is known to be away it throws {@code UNAVAILABLE} at once, sending nothing (docs/design.md §9).
     * Right after a lost ZooKeeper session the deduction id may first wait for the worker slot.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} ({@code commands}) outside {@code 1..}{@link
     *     Integer#MAX_VALUE}; {@code ILLEGAL_STATE} when the client was built without {@link
     *     Builder#redisAddress}, is not started or is closed; {@code UNAVAILABLE} when Redis (or, for
     *     the deduction id, ZooKeeper's worker slot) does not answer: no permit was granted, retry
     */
    Optional<Permit> tryAcquire(long commands);

    /**
     * Gives back {@code commands} of deduction {@code deductionId} (a {@link Permit#deductionId()}).
     * May be partial and repeated; refunds of one deduction never sum above it; idempotent by {@code
     * refundId}, which is unique per deduction (the same refund again changes nothing and does not
     * throw; the same refund id on another deduction is another refund). Works for any deduction of
     * the cluster, also one made by another client or before a restart, while Redis keeps its month.
     *
     * @throws PidPoolException {@code INVALID_ARGUMENT} for a malformed id or amount; {@code NOT_FOUND}
     *     ({@code deductionId}) for an unknown deduction; {@code ILLEGAL_STATE} ({@code amount}) when
     *     it would exceed the deduction; {@code CONFLICT} ({@code refundId}) when the refund id was used
     *     for this deduction with another amount; {@code ILLEGAL_STATE} without {@link Builder#redisAddress}
     *     or when not started/closed; {@code UNAVAILABLE} when Redis does not answer within {@link
     *     Builder#acquireTimeout} or is known to be away (the refund may or may not have been applied:
     *     retry with the same refund id, which applies it at most once)
     */
    void refund(String deductionId, String refundId, long commands);

    /**
     * {@link #tryAcquire} without parking the calling thread, with the same lease check (docs/design.md §6: a
     * permit only for a PID this client holds while its lease is valid, checked before the deduction is
     * sent and again after Redis granted it; a grant that raced a revocation is given back). With
     * {@link Builder#batchedPermits(boolean) batchedPermits(true)} the acquire is queued and the future
     * completes when its batch was answered, so one thread can keep many acquires in flight; otherwise
     * the deduction runs on the calling thread and the returned future is already complete.
     *
     * <p>The future completes on a Redisson I/O thread or the quota batcher's thread: attach only short,
     * non-blocking actions, no synchronous Redis calls
     * (or use the {@code *Async} variants with an executor of your own). Cancelling or completing it
     * yourself abandons the acquire; a deduction granted for it afterwards is voided, never lost.
     * Redis errors ({@code UNAVAILABLE}) arrive through the future.
     *
     * @throws PidPoolException at once: {@code INVALID_ARGUMENT} ({@code commands}) outside {@code
     *     1..}{@link Integer#MAX_VALUE}; {@code ILLEGAL_STATE} without {@link Builder#redisAddress},
     *     before {@code start()} or after {@code close()}
     */
    CompletableFuture<Optional<Permit>> tryAcquireAsync(int commands);

    /**
     * How many held PIDs this client found without a limit in Redis, each counted once: such a PID
     * grants nothing, so {@link #tryAcquire} answers empty for it. Each is also logged at ERROR once,
     * naming the PID. It means the servers provisioned the limits elsewhere: another Redis, another
     * database ({@link Builder#redisDatabase}) or another cluster name. 0 without Redis. Never blocks.
     */
    long pidsWithoutLimit();

    /**
     * Tells the leader that the third-party platform refused the login with this PID (wrong or expired
     * password, account locked, ...). The leader puts the PID into cooldown (nobody gets it for the
     * configured time, default 10 minutes), withdraws it from this instance ({@code onRevoked} follows)
     * and raises an alert. May be called from inside {@code onAssigned} (e.g. just before it throws):
     * the report then goes with the answer to the assignment and the PID cools down at once instead
     * of being retried elsewhere.
     *
     * <p>Asynchronous: returns once the report is queued; it reaches the leader through this PID's
     * ZooKeeper node (a versioned write), so it needs the session that was given the PID.
     *
     * @param reason for the operator (the platform's message); never a password. At most 1000
     *     characters are kept.
     * @return whether this client has the PID (held, or being assigned or revoked); {@code false}: the
     *     PID is not this client's, nothing was reported
     * @throws PidPoolException {@code INVALID_ARGUMENT} for a malformed PID id; {@code ILLEGAL_STATE}
     *     when the client is not started or is closed
     */
    boolean reportLoginFailure(String pid, String reason);

    /**
     * Tells the leader that the platform reports a second login with this PID (another terminal is
     * using the account; repeated double logins get it frozen). Handled like {@link
     * #reportLoginFailure}: cooldown, withdrawn from this instance, alert.
     *
     * @param detail for the operator (e.g. the platform's message); at most 1000 characters are kept
     * @return whether this client has the PID; {@code false}: nothing was reported
     * @throws PidPoolException as {@link #reportLoginFailure}
     */
    boolean reportLoginConflict(String pid, String detail);

    /** Where the client is in its life cycle. */
    State state();

    /** The current registration (session, instance id), if the client is registered right now. */
    Optional<Registration> registration();

    /**
     * Stops granting permits, revokes every held PID ({@code onRevoked}), tells the leader (each PID node is acknowledged
     * DELETED after its {@code onRevoked} returned, so the leader may move it at once), deletes the
     * instance node and closes the ZooKeeper session; then releases the worker-id slot and closes the
     * Redis client (unless it was given). Waits for running callbacks up to the close
     * timeout. Idempotent; never throws.
     */
    @Override
    void close();

    /**
     * Builds a {@link PidClient}. Setters validate at once and throw {@link PidPoolException} ({@code
     * INVALID_ARGUMENT}, naming the field); {@link #build()} checks that the required ones were set.
     * Not thread-safe.
     */
    final class Builder {
        /** The servers' check of {@code redis.address}. */
        private static final java.util.regex.Pattern REDIS_ADDRESS =
                java.util.regex.Pattern.compile("rediss?://[^\\s/:]+:\\d{1,5}");

        private String connectString;
        private String cluster = ZkLayout.DEFAULT_CLUSTER;
        private ModuleKey module;
        private String redisAddress;
        private String redisPassword;
        private RedissonClient redisson;
        private int redisDatabase;
        private boolean redisDatabaseSet;
        private Duration redisTimeout = RedisOptions.DEFAULTS.timeout();
        private boolean redisTimeoutSet;
        private Duration acquireTimeout = RedisOptions.DEFAULTS.acquireTimeout();
        private String redisConfigYaml;
        private PidListener listener;
        private String instancePrefix;
        private String host;
        private int weight = 1;
        private SecretOpener secretOpener;
        private Duration sessionTimeout = Duration.ofSeconds(5);
        private Duration startTimeout = Duration.ofSeconds(30);
        private Duration closeTimeout = Duration.ofSeconds(10);
        private Duration callbackDeadline = InstanceNode.DEFAULT_CALLBACK_DEADLINE;
        private Ticker ticker = Ticker.system();
        private boolean closeOnJvmExit = true;
        private io.pidpool.client.internal.ClientObserver observer = io.pidpool.client.internal.ClientObserver.NONE;
        private Executor callbackExecutor;
        private ZkAuth zkAuth = ZkAuth.none();
        private boolean batchedPermits;

        private Builder() {}

        /** ZooKeeper ensemble, e.g. {@code zk1:2181,zk2:2181}. Required. */
        public Builder connectString(String connectString) {
            this.connectString = ZkSessions.requireConnectString(connectString);
            return this;
        }

        /** Cluster name: the ZooKeeper namespace is {@code /pidpool/<cluster>}. Default {@code default}. */
        public Builder cluster(String cluster) {
            this.cluster = Names.requireToken(cluster, "cluster");
            return this;
        }

        /** The module this instance serves, {@code department#module#system}. Required. */
        public Builder module(String module) {
            this.module = ModuleKey.parse(module);
            return this;
        }

        /**
         * Redis for the quota ledger, {@code redis://host:port} or {@code rediss://host:port}: enables
         * {@link PidClient#tryAcquire} and {@link PidClient#refund}. The client builds (and closes) its
         * own Redisson client with {@code StringCodec}; {@code rediss://} is TLS. The servers' {@code
         * redis.address}; with {@link #redisPassword}, {@link #redisDatabase} and {@link #redisTimeout}
         * it covers their single-server settings. Optional; see also {@link #redisConfigYaml} and
         * {@link #redisson}. The last of {@code redisAddress}/{@code redisConfigYaml}/{@code redisson}
         * wins.
         */
        public Builder redisAddress(String redisAddress) {
            requireArgument(
                    redisAddress != null && REDIS_ADDRESS.matcher(redisAddress).matches(),
                    "redisAddress",
                    "redisAddress must look like redis://host:port or rediss://host:port, was '%s'",
                    redisAddress);
            this.redisAddress = redisAddress;
            this.redisson = null;
            this.redisConfigYaml = null;
            return this;
        }

        /**
         * The Redis database index of {@link #redisAddress}, {@code >= 0}: the servers' {@code
         * redis.database}. Default 0. A client reading another database than the servers' finds no
         * limits and grants nothing ({@link PidClient#pidsWithoutLimit()}).
         */
        public Builder redisDatabase(int database) {
            requireArgument(database >= 0, "redisDatabase", "redisDatabase must be >= 0, was %d", database);
            this.redisDatabase = database;
            this.redisDatabaseSet = true;
            return this;
        }

        /** Connect and response timeout of {@link #redisAddress}, 100 ms..60 s. Default 3 s. */
        public Builder redisTimeout(Duration timeout) {
            requireNonNull(timeout, "redisTimeout");
            requireArgument(
                    timeout.compareTo(Duration.ofMillis(100)) >= 0 && timeout.compareTo(Duration.ofSeconds(60)) <= 0,
                    "redisTimeout",
                    "redisTimeout must be within 100 ms..60 s, was %s",
                    timeout);
            this.redisTimeout = timeout;
            this.redisTimeoutSet = true;
            return this;
        }

        /**
         * The longest {@link PidClient#tryAcquire} waits for Redis, 10 ms..60 s; default 1 s. Past it the
         * caller gets {@code UNAVAILABLE} (no permit; a deduction that may have happened is voided
         * later), and until Redis answers a background probe again every further call fails at once
         * (docs/design.md §9). Applies with any Redis option.
         */
        public Builder acquireTimeout(Duration timeout) {
            requireNonNull(timeout, "acquireTimeout");
            requireArgument(
                    timeout.compareTo(Duration.ofMillis(10)) >= 0 && timeout.compareTo(Duration.ofSeconds(60)) <= 0,
                    "acquireTimeout",
                    "acquireTimeout must be within 10 ms..60 s, was %s",
                    timeout);
            this.acquireTimeout = timeout;
            return this;
        }

        /**
         * A Redisson YAML configuration instead of {@link #redisAddress}: the servers' {@code
         * redis.redisson} block as text ({@code clusterServersConfig}, {@code sentinelServersConfig},
         * {@code singleServerConfig} with {@code database}, {@code password}, {@code username}, TLS
         * settings, timeouts, ...). Checked now the way the server checks its block (Redisson reads
         * it); the codec is always {@code StringCodec}. The client builds and closes the Redisson
         * client. Not combined with {@link #redisPassword}, {@link #redisDatabase} or {@link
         * #redisTimeout}: put those into the configuration.
         */
        public Builder redisConfigYaml(String yaml) {
            requireArgument(yaml != null && !yaml.isBlank(), "redisConfigYaml", "redisConfigYaml must not be empty");
            try {
                org.redisson.config.Config.fromYAML(yaml);
            } catch (java.io.IOException | RuntimeException e) {
                requireArgument(
                        false,
                        "redisConfigYaml",
                        "redisConfigYaml is not a valid Redisson configuration (%s)",
                        e.getClass().getSimpleName());
            }
            this.redisConfigYaml = yaml;
            this.redisAddress = null;
            this.redisson = null;
            return this;
        }

        /**
         * ZooKeeper digest authentication, {@code user:password}: the same identity as the servers'
         * {@code zookeeper.auth}. Every session of the client (registration and worker-id slot)
         * authenticates with it and every node the client creates gets the ACL {@code
         * digest:user:<hash>} (all permissions), so only the servers and SDKs of the cluster can read
         * or change them ({@link ZkAuth}). Default: none (open ACL). Never logged.
         *
         * @throws PidPoolException {@code INVALID_ARGUMENT} ({@code zookeeper.auth}) unless {@code
         *     user:password}
         */
        public Builder zookeeperAuth(String userColonPassword) {
            this.zkAuth = ZkAuth.digest(userColonPassword);
            return this;
        }

        /** Password for {@link #redisAddress}, if Redis requires one. Never logged. */
        public Builder redisPassword(String redisPassword) {
            requireArgument(
                    redisPassword != null && !redisPassword.isEmpty(),
                    "redisPassword",
                    "redisPassword must not be empty");
            this.redisPassword = redisPassword;
            return this;
        }

        /**
         * A ready Redisson client for the quota ledger, instead of {@link #redisAddress} (e.g. for
         * Redis Cluster or Sentinel). Its codec does not matter: the ledger uses strings explicitly.
         * The SDK never shuts it down. The last of {@code redisAddress}/{@code redisson} wins.
         */
        public Builder redisson(RedissonClient redisson) {
            this.redisson = requireNonNull(redisson, "redisson");
            this.redisAddress = null;
            this.redisConfigYaml = null;
            return this;
        }

        /** Receives assignments and revocations. Required. */
        public Builder listener(PidListener listener) {
            this.listener = requireNonNull(listener, "listener");
            return this;
        }

        /**
         * Prefix of the instance id; the id is {@code <prefix>-<session id in hex>}. Default: the
         * host name, reduced to {@code [A-Za-z0-9_.-]}. At most 47 characters.
         */
        public Builder instanceId(String prefix) {
            Names.requireToken(prefix, "instanceId");
            requireArgument(
                    prefix.length() <= DefaultPidClient.MAX_PREFIX,
                    "instanceId",
                    "instanceId prefix must be at most %d characters, was %d",
                    DefaultPidClient.MAX_PREFIX,
                    prefix.length());
            this.instancePrefix = prefix;
            return this;
        }

        /** Host name shown to operators in the instance node. Default: this machine's name. */
        public Builder host(String host) {
            requireArgument(host != null && !host.isBlank(), "host", "host must not be blank");
            this.host = host;
            return this;
        }

        /** This instance's share relative to its peers, 1..1000. Default 1. */
        public Builder weight(int weight) {
            requireArgument(weight >= 1 && weight <= 1000, "weight", "weight must be within 1..1000, was %d", weight);
            this.weight = weight;
            return this;
        }

        /**
         * Decrypts the PIDs' sealed passwords. Required, unless {@link #secretKeys} or {@link
         * #secretKey} sets it. The last of the three calls wins.
         */
        public Builder secretOpener(SecretOpener opener) {
            this.secretOpener = requireNonNull(opener, "secretOpener");
            return this;
        }

        /**
         * Opens the PIDs' passwords with the cluster's AES keyring (the servers'
         * {@code security.secretKeys}): key id → base64 128- or 256-bit AES key. Builds a core {@link
         * SecretSealer} and uses {@code sealer::open} as the {@link SecretOpener}. Give every key that
         * may still have sealed a password (old and new during a rotation). The keys are decoded at
         * once and kept only inside the sealer: no log line, exception message or {@code toString()}
         * of the SDK contains them. A PID whose password does not open (unknown key id, wrong key,
         * tampered data) fails its assignment and the reason is written into its node, like a throwing
         * {@code onAssigned}.
         *
         * @throws PidPoolException {@code INVALID_ARGUMENT} for an empty map ({@code secretKeys}), a
         *     bad key id ({@code secret.keyId}) or a key that is not base64 of 16 or 32 bytes ({@code
         *     secretKeys.<keyId>}); the message never repeats the key
         */
        public Builder secretKeys(Map<String, String> base64KeysById) {
            requireNonNull(base64KeysById, "secretKeys");
            requireArgument(!base64KeysById.isEmpty(), "secretKeys", "secretKeys needs at least one key");
            SecretSealer.Builder keyring = SecretSealer.builder();
            base64KeysById.forEach(keyring::key);
            // the SDK only opens; the "current" (sealing) key does not matter here
            keyring.current(base64KeysById.keySet().iterator().next());
            this.secretOpener = new SealerSecretOpener(keyring.build());
            return this;
        }

        /**
         * Opens the PIDs' passwords with the one AES key of the servers' {@code security.secretKey}
         * (base64, 128 or 256 bits); its key id is derived from the key as the servers derive it
         * ({@link SecretSealer#fromSingleKey}). Otherwise like {@link #secretKeys}.
         *
         * @throws PidPoolException {@code INVALID_ARGUMENT} ({@code secretKey}) if it is not base64 of
         *     16 or 32 bytes; the message never repeats the key
         */
        public Builder secretKey(String base64Key) {
            this.secretOpener = new SealerSecretOpener(SecretSealer.fromSingleKey(base64Key));
            return this;
        }

        /**
         * The ZooKeeper session timeout to ask for. The server may negotiate another value; every
         * timing (lease, heartbeat, pause budget) is derived from the negotiated one. Default 5 s.
         */
        public Builder sessionTimeout(Duration timeout) {
            this.sessionTimeout = ZkSessions.requireSessionTimeout(timeout);
            return this;
        }

        /** How long {@link PidClient#start()} waits for the registration. Default 30 s. */
        public Builder startTimeout(Duration timeout) {
            requireArgument(
                    timeout != null && !timeout.isNegative() && !timeout.isZero(),
                    "startTimeout",
                    "startTimeout must be positive, was %s",
                    timeout);
            this.startTimeout = timeout;
            return this;
        }

        /**
         * D, the longest {@code onAssigned} or {@code onUpdated} may run. Default 5 s; within 100 ms..5
         * min. A call that has not returned D after it started is abandoned: the SDK interrupts its
         * thread, logs an error naming the PID and D, does not hold the PID, calls {@code onRevoked}
         * for the account so that a login still in progress is undone, and reports the failure to the
         * leader. The client registers D, and the leader waits D longer before it hands a vanished
         * instance's PIDs on (its grace = T/3 + D + logout allowance, docs/sdk.md "Timing"): a larger D
         * makes slow logins possible and failover slower.
         */
        public Builder callbackDeadline(Duration deadline) {
            requireArgument(
                    deadline != null
                            && deadline.compareTo(InstanceNode.MIN_CALLBACK_DEADLINE) >= 0
                            && deadline.compareTo(InstanceNode.MAX_CALLBACK_DEADLINE) <= 0,
                    "callbackDeadline",
                    "callbackDeadline must be within %s..%s, was %s",
                    InstanceNode.MIN_CALLBACK_DEADLINE,
                    InstanceNode.MAX_CALLBACK_DEADLINE,
                    deadline);
            this.callbackDeadline = deadline.truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
            return this;
        }

        /** How long {@link PidClient#close()} waits for callbacks and acknowledgements. Default 10 s. */
        public Builder closeTimeout(Duration timeout) {
            requireArgument(
                    timeout != null && !timeout.isNegative(),
                    "closeTimeout",
                    "closeTimeout must not be negative, was %s",
                    timeout);
            this.closeTimeout = timeout;
            return this;
        }

        /**
         * The monotonic nanosecond clock for the lease and the pause detector. Default: {@link
         * System#nanoTime()}. Tests pass a manual one to simulate pauses.
         */
        public Builder ticker(LongSupplier nanoTime) {
            requireNonNull(nanoTime, "ticker");
            this.ticker = nanoTime::getAsLong;
            return this;
        }

        /**
         * Runs {@code onAssigned} and {@code onUpdated}. The client hands each call to it from a thread
         * of its own (so even a caller-runs executor never blocks the client) and never shuts it
         * down. Default: a pool of 4 daemon threads owned (and shut down) by the client. {@code
         * onRevoked} never runs here but on the client's own revocation threads, so no executor can
         * make a logout wait behind logins. Callbacks of one PID never overlap, whatever the executor.
         */
        public Builder callbackExecutor(Executor executor) {
            this.callbackExecutor = requireNonNull(executor, "callbackExecutor");
            return this;
        }

        /**
         * Batched quota mode (default {@code false}): concurrent {@link PidClient#tryAcquire} and {@link
         * PidClient#tryAcquireAsync} calls are queued and sent together, up to 128 deductions in one
         * Redis round trip (one run of the batch script; on Redis Cluster one per shard, pipelined).
         * Up to 3 batches are on the wire at once and the next one accumulates meanwhile; an acquire on
         * an idle client goes out at once. Each deduction is still an atomic check + deduct with its own usage event, and the lease
         * check is the same.
         *
         * <p>What it trades: much higher permit throughput under many concurrent callers (docs/
         * benchmarks-quota.md) for one extra thread (the flusher), an extra thread hand-off per call
         * (a single caller on an idle client is slightly slower than in direct mode) and latency that
         * includes waiting for the batch in flight. Callers waiting longer than 10 s get {@code
         * UNAVAILABLE}; more than 10,000 queued acquires are refused ({@code UNAVAILABLE}).
         */
        public Builder batchedPermits(boolean batched) {
            this.batchedPermits = batched;
            return this;
        }

        /**
         * Whether a JVM shutdown hook closes the client (default {@code true}): when the JVM shuts down
         * without {@link PidClient#close()} (the last non-daemon thread ended, {@code System.exit},
         * SIGTERM or Ctrl-C), the hook runs {@code close()}, so every held PID is logged out
         * ({@code onRevoked}) and handed back at once instead of after the session timeout and the
         * leader's grace. Turn it off when your framework closes the client in its own shutdown
         * order. Independent of this setting, the SDK never keeps a JVM alive: its threads are daemon
         * threads, and when only the Redis threads of a client the SDK built are left after the
         * main thread ended, it closes that client so that the JVM exits.
         */
        public Builder closeOnJvmExit(boolean close) {
            this.closeOnJvmExit = close;
            return this;
        }

        /**
         * Binds the client's meters to the application's Micrometer registry ({@code
         * pidpool.client.*}, tagged with the module and a client number; docs/sdk.md "Metrics"). Needs
         * {@code io.micrometer:micrometer-core} on the class path (an optional dependency of the SDK);
         * without this call the SDK neither records nor needs Micrometer.
         */
        public Builder meterRegistry(io.micrometer.core.instrument.MeterRegistry registry) {
            requireNonNull(registry, "meterRegistry");
            this.observer = io.pidpool.client.internal.metrics.PidClientMetrics.observer(registry);
            return this;
        }

        /** A client that has not been started yet. */
        public PidClient build() {
            requireNonNull(connectString, "connectString");
            requireNonNull(module, "module");
            requireNonNull(listener, "listener");
            requireNonNull(secretOpener, "secretOpener");
            if (redisAddress == null) {
                String single = redisPassword != null
                        ? "redisPassword"
                        : redisDatabaseSet ? "redisDatabase" : redisTimeoutSet ? "redisTimeout" : null;
                requireArgument(
                        single == null,
                        single == null ? "redisAddress" : single,
                        "%s applies to redisAddress only; with redisConfigYaml or redisson put it into the Redisson"
                                + " configuration",
                        single);
            }
            return DefaultPidClient.create(new ClientSettings(
                    connectString,
                    new ZkLayout(cluster),
                    module,
                    redisAddress,
                    redisPassword,
                    redisson,
                    new RedisOptions(redisDatabase, redisTimeout, redisConfigYaml, acquireTimeout),
                    listener,
                    secretOpener,
                    instancePrefix,
                    host,
                    weight,
                    sessionTimeout,
                    startTimeout,
                    closeTimeout,
                    callbackDeadline,
                    ticker,
                    callbackExecutor,
                    zkAuth,
                    batchedPermits,
                    closeOnJvmExit,
                    observer));
        }
    }
}
