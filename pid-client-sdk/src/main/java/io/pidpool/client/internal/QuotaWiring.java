package io.pidpool.client.internal;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.ids.ClusterSnowflakeIds;
import io.pidpool.client.internal.ids.CuratorWorkerIdRegistry;
import io.pidpool.client.internal.quota.HeldPids;
import io.pidpool.client.internal.quota.MissingLimits;
import io.pidpool.client.internal.quota.PermitIssuer;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthLedger;
import io.pidpool.core.quota.RefundResult;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.CuratorFramework;
import org.redisson.Redisson;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The quota side of a {@link DefaultPidClient}: a Redisson client (built from {@code redisAddress}
 * with {@link StringCodec}, or the caller's), a {@link RedissonQuotaLedger}, Snowflake ids from a
 * worker slot on the client's own Curator session ({@link CuratorWorkerIdRegistry} + {@link
 * ClusterSnowflakeIds}) and a {@link PermitIssuer} whose {@link HeldPids} is the client's hold.
 *
 * <p>Life cycle: {@link #open} builds everything or nothing (a failure closes what was built). The
 * client closes it in two steps: {@link #stopGranting()} before it revokes the PIDs, {@link
 * #release()} after (worker slot, then ledger, then Redisson if owned).
 *
 * <p>Concurrency: {@link #tryAcquire} and {@link #refund} are thread-safe (the issuer is); the two
 * close steps are called once each, by the closing thread.
 */
final class QuotaWiring {
    private static final Logger log = LoggerFactory.getLogger(QuotaWiring.class);
    /** Batches on the wire at once in batched mode. */
    static final int BATCHES_IN_FLIGHT = 3;

    /** Acquires per round trip in batched mode ({@code PidClient.Builder#batchedPermits}). */
    static final int BATCH_SIZE = 128;

    private final RedissonClient redisson;
    private final boolean ownsRedisson;
    private final RedissonQuotaLedger ledger;
    private final CuratorWorkerIdRegistry registry;
    private final ClusterSnowflakeIds ids;
    private final PermitIssuer issuer;
    private final MissingLimits missingLimits;
    /** The threads of a Redisson client the SDK built ({@link JvmExit}); {@code null} for the caller's. */
    private final ThreadGroup redisThreads;

    private volatile ClientObserver observer = ClientObserver.NONE;

    private QuotaWiring(
            RedissonClient redisson,
            boolean ownsRedisson,
            RedissonQuotaLedger ledger,
            CuratorWorkerIdRegistry registry,
            ClusterSnowflakeIds ids,
            PermitIssuer issuer,
            MissingLimits missingLimits,
            ThreadGroup redisThreads) {
        this.redisThreads = redisThreads;
        this.missingLimits = missingLimits;
        this.redisson = redisson;
        this.ownsRedisson = ownsRedisson;
        this.ledger = ledger;
        this.registry = registry;
        this.ids = ids;
        this.issuer = issuer;
    }

    /**
     * Connects to Redis and ZooKeeper (worker slot) for {@code settings}; {@code held} is the client's
     * hold. The worker slot is taken now if possible (otherwise at the first permit).
     *
     * @throws PidPoolException {@code UNAVAILABLE} when Redis cannot be reached (nothing stays open)
     */
    static QuotaWiring open(
            ClientSettings settings, HeldPids held, String prefix, String host, CuratorFramework curator) {
        RedissonClient redisson = settings.redisson();
        boolean owns = redisson == null;
        RedissonQuotaLedger ledger = null;
        CuratorWorkerIdRegistry registry = null;
        ClusterSnowflakeIds ids = null;
        ThreadGroup redisThreads = owns ? JvmExit.newGroup("pidclient-redis-" + prefix) : null;
        try {
            if (owns) {
                // in a thread group of its own: Redisson's threads are not daemon threads (JvmExit)
                redisson = JvmExit.createIn(redisThreads, () -> createRedisson(settings));
            }
            String clientId =
                    prefix + "-" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            ledger = RedissonQuotaLedger.builder()
                    .redisson(redisson)
                    .cluster(settings.layout().cluster())
                    .clientId(clientId)
                    .ticker(settings.ticker())
                    .build();
            // the worker slot lives on the client's own session: one ZooKeeper session (and one set of
            // Curator threads) per client, and the slot is back whenever the registration is
            registry = CuratorWorkerIdRegistry.builder()
                    .curator(curator)
                    .zkAuth(settings.zkAuth())
                    .cluster(settings.layout().cluster())
                    .host(host)
                    .operationTimeout(settings.startTimeout())
                    .build();
            ids = ClusterSnowflakeIds.builder().registry(registry).build();
            takeSlotSoon(ids);
            ClusterSnowflakeIds source = ids;
            MissingLimits missingLimits =
                    new MissingLimits(redisson, ledger.keys(), settings.ticker(), redisAddressForLog(settings));
            PermitIssuer.Builder issuerBuilder = PermitIssuer.builder()
                    .missingLimits(missingLimits)
                    .ledger(ledger)
                    .held(held)
                    .ids(source::nextId)
                    .acquireTimeout(settings.redisOptions().acquireTimeout())
                    .ticker(settings.ticker());
            if (settings.batchedPermits()) {
                // 3 batches on the wire keep Redis busy under many async acquires (docs/benchmarks-quota.md)
                issuerBuilder.batching(BATCH_SIZE).maxInFlight(BATCHES_IN_FLIGHT);
            }
            PermitIssuer issuer = issuerBuilder.build();
            log.info("Quota ledger ready: {} on {}, {}", ledger, redisAddressForLog(settings), ids);
            return new QuotaWiring(redisson, owns, ledger, registry, ids, issuer, missingLimits, redisThreads);
        } catch (RuntimeException e) {
            closeQuietly(ids);
            closeQuietly(registry);
            closeQuietly(ledger);
            if (owns && redisson != null) {
                redisson.shutdown();
            }
            if (e instanceof PidPoolException p) {
                throw p;
            }
            throw PidPoolException.unavailable(
                    "could not connect to the quota ledger at " + redisAddressForLog(settings) + ": " + e.getMessage(),
                    e);
        }
    }

    /**
     * Takes the worker slot in the background rather than on the first permit, without making start()
     * wait for it (a ZooKeeper session of its own and a few round trips); a permit asked for meanwhile
     * waits for the slot as before.
     */
    private static void takeSlotSoon(ClusterSnowflakeIds ids) {
        Thread taker = new Thread(
                () -> {
                    try {
                        ids.nextId();
                    } catch (RuntimeException e) {
                        log.debug("No worker id yet (taken at the first permit): {}", e.toString());
                    }
                },
                "pidclient-worker-slot");
        taker.setDaemon(true);
        taker.start();
    }

    /** Address and database, or what else names the Redis; never a password. */
    private static String redisAddressForLog(ClientSettings settings) {
        if (settings.redisAddress() != null) {
            return settings.redisAddress() + " database "
                    + settings.redisOptions().database();
        }
        return settings.redisOptions().configYaml() != null
                ? "the configured Redisson servers"
                : "the given Redisson client";
    }

    private static RedissonClient createRedisson(ClientSettings settings) {
        RedisOptions options = settings.redisOptions();
        if (options.configYaml() != null) {
            Config config;
            try {
                config = Config.fromYAML(options.configYaml());
            } catch (java.io.IOException e) {
                throw PidPoolException.invalid(
                        "redisConfigYaml", "redisConfigYaml is not a valid Redisson configuration");
            }
            config.setCodec(StringCodec.INSTANCE); // whatever the YAML says: the scripts read strings
            return Redisson.create(config);
        }
        int timeoutMs = (int) options.timeout().toMillis();
        Config config = new Config();
        config.setCodec(StringCodec.INSTANCE); // never Kryo: other tools and the Lua scripts read the values
        config.setThreads(4);
        config.setNettyThreads(8);
        config.useSingleServer()
                .setAddress(settings.redisAddress())
                .setPassword(settings.redisPassword())
                .setDatabase(options.database())
                .setClientName("pidpool-sdk")
                .setConnectTimeout(timeoutMs)
                .setTimeout(timeoutMs)
                .setRetryAttempts(2)
                .setRetryDelay(new org.redisson.config.ConstantDelay(Duration.ofMillis(200)))
                // Redisson's default backs off to 10 s between reconnects: permits would resume that
                // late after Redis came back (docs/outages.md); 100..400 ms, jittered across clients
                .setReconnectionDelay(
                        new org.redisson.config.EqualJitterDelay(Duration.ofMillis(100), Duration.ofMillis(400)))
                .setConnectionMinimumIdleSize(2)
                .setConnectionPoolSize(32)
                .setPingConnectionInterval(1000);
        return Redisson.create(config);
    }

    /** Metrics of permits and refunds from now on. */
    void observe(ClientObserver observer) {
        this.observer = observer;
    }

    /** The thread group of the Redisson client the SDK built, if it did. */
    Optional<ThreadGroup> ownedThreads() {
        return Optional.ofNullable(redisThreads);
    }

    long pidsWithoutLimit() {
        return missingLimits.count();
    }

    Optional<Permit> tryAcquire(long commands) {
        MonthLedger.requireAmount(commands);
        if (commands > Integer.MAX_VALUE) {
            throw PidPoolException.invalid(
                    "commands", "commands must be at most %d per permit, was %d", Integer.MAX_VALUE, commands);
        }
        Optional<Permit> permit;
        try {
            permit = issuer.tryAcquire((int) commands);
        } catch (RuntimeException e) {
            observer.permitError();
            throw e;
        }
        observer.permit(permit.isPresent());
        return permit;
    }

    CompletableFuture<Optional<Permit>> tryAcquireAsync(int commands) {
        CompletableFuture<Optional<Permit>> future = issuer.tryAcquireAsync(commands);
        ClientObserver o = observer;
        if (o != ClientObserver.NONE) {
            future.whenComplete((permit, failure) -> {
                if (failure != null) {
                    o.permitError();
                } else {
                    o.permit(permit.isPresent());
                }
            });
        }
        return future;
    }

    void refund(String deductionId, String refundId, long commands) {
        MonthLedger.requireAmount(commands);
        if (commands > Integer.MAX_VALUE) {
            throw PidPoolException.invalid(
                    "commands", "commands must be at most %d per refund, was %d", Integer.MAX_VALUE, commands);
        }
        RefundResult result;
        try {
            result = issuer.refund(deductionId, refundId, (int) commands);
        } catch (RuntimeException e) {
            observer.refund(ClientObserver.RefundOutcome.ERROR);
            throw e;
        }
        if (result instanceof RefundResult.RefundRejected rejected) {
            observer.refund(ClientObserver.RefundOutcome.REJECTED);
            throw rejected.toException();
        }
        observer.refund(
                result instanceof RefundResult.RefundDuplicate
                        ? ClientObserver.RefundOutcome.REPEATED
                        : ClientObserver.RefundOutcome.APPLIED);
    }

    /** Step 1 of close: no permit is granted from now on (callers get {@code ILLEGAL_STATE}). */
    void stopGranting() {
        closeQuietly(issuer);
    }

    /** Step 2 of close, after the PIDs were revoked: worker slot, ledger, then Redisson (if owned). */
    void release() {
        closeQuietly(ids);
        closeQuietly(registry);
        closeQuietly(ledger);
        if (ownsRedisson) {
            try {
                redisson.shutdown();
            } catch (RuntimeException e) {
                log.warn("Closing the Redisson client failed: {}", e.toString());
            }
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (Exception e) {
            log.warn("Closing {} failed: {}", c.getClass().getSimpleName(), e.toString());
        }
    }
}
