package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.PidAccount;
import io.pidpool.client.PidClient;
import io.pidpool.client.PidListener;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.redis.RedisQuotaProvisioner;
import io.pidpool.server.testing.TestCluster;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The leader provisions quota for real clients: a {@link ClusterMember} (curator-test ZooKeeper on
 * loopback, H2 through the Jdbi adapters) with a {@link RedisQuotaProvisioner}, and a real {@link
 * PidClient} built with {@code redisAddress} and the leader's AES key, whose {@code tryAcquire} grants
 * exactly what the operator's batches provisioned.
 */
class QuotaProvisioningIT {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");
    static final Duration WAIT = Duration.ofSeconds(30);
    /** Upper bound of acquire calls in one drain: every loop ends. */
    static final int MAX_CALLS = 1_000;

    final String key = randomKey();
    final SecretSealer sealer = SecretSealer.fromSingleKey(key);
    final String quotaCluster = RedisSupport.randomCluster();
    final Map<String, String> loggedIn = new ConcurrentHashMap<>();
    final List<AutoCloseable> closeables = new ArrayList<>();
    TestCluster cluster;

    @BeforeEach
    void setUp() {
        cluster = new TestCluster();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        cluster.close();
    }

    static String randomKey() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    RedisQuotaProvisioner provisioner(String redisUrl) {
        RedissonClient redis = RedisSupport.client(redisUrl);
        RedisQuotaProvisioner provisioner = RedisQuotaProvisioner.builder()
                .redisson(redis)
                .cluster(quotaCluster)
                .clientId("leader-s1")
                .zone(ZoneOffset.UTC)
                .build();
        closeables.add(() -> {
            try {
                RedisSupport.drop(redis, provisioner.ledger().keys());
            } catch (RuntimeException e) {
                // a Redis of the test's own that is gone already
            }
            provisioner.close();
            redis.shutdown();
        });
        return provisioner;
    }

    ClusterMember startLeader(RedisQuotaProvisioner provisioner) {
        ClusterMember node = cluster.startNode("s1", b -> b.cluster(quotaCluster)
                .sealer(sealer::seal)
                .quotaProvisioner(provisioner)
                .quotaReconcileInterval(Duration.ofSeconds(1))
                .quotaRetryDelay(Duration.ofMillis(200)));
        await().atMost(WAIT).until(node::isLeader);
        return node;
    }

    PidClient startClient(String redisUrl) {
        PidClient client = PidClient.builder()
                .connectString(cluster.zk.connectString())
                .cluster(quotaCluster)
                .module(M.toString())
                .instanceId("box")
                .host("test-host")
                .secretKey(key)
                .redisAddress(redisUrl)
                .sessionTimeout(Duration.ofSeconds(4))
                .listener(new PidListener() {
                    @Override
                    public void onAssigned(PidAccount account) {
                        loggedIn.put(account.id(), account.secret());
                    }

                    @Override
                    public void onRevoked(PidAccount account) {
                        loggedIn.remove(account.id());
                    }
                })
                .build();
        closeables.add(client);
        client.start();
        return client;
    }

    static BatchRecord apply(ClusterMember node, Operation<String> op) throws Exception {
        BatchId id = node.batches().submit(List.of(op), "alice");
        BatchRecord done = node.batches().await(id, WAIT).get(WAIT.toSeconds() + 5, TimeUnit.SECONDS);
        assertThat(done.status()).as("%s", done.results()).isEqualTo(BatchStatus.DEALED);
        return done;
    }

    static PidSpec<String> spec(String pid, long quota, long overage) {
        return new PidSpec<>(pid, "secret-of-" + pid, quota, overage, Map.of());
    }

    static QuotaMonth thisMonth() {
        return new MonthlyWindow(ZoneOffset.UTC).monthOf(Instant.now());
    }

    /** Waits until the client grants one command (what the leader provisioned reached it); returns the wait. */
    static Duration awaitFirstGrant(PidClient client) {
        long start = System.nanoTime();
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(20))
                .ignoreExceptions() // UNAVAILABLE while a Redis of the test's own restarts
                .until(() -> client.tryAcquire(1).isPresent());
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** Takes single commands until none is granted; returns how many were. */
    static int drain(PidClient client) {
        for (int granted = 0; granted < MAX_CALLS; granted++) {
            if (client.tryAcquire(1).isEmpty()) {
                return granted;
            }
        }
        throw new AssertionError("still granting after " + MAX_CALLS + " commands");
    }

    @Test
    void operatorBatchesChangeWhatTheClientGrantsAtOnce() throws Exception {
        String url = RedisSupport.sharedUrl();
        RedisQuotaProvisioner provisioner = provisioner(url);
        ClusterMember leader = startLeader(provisioner);
        PidClient client = startClient(url);

        // ADD: quota 40 + overage 10 = a hard limit of 50
        apply(leader, new Operation.Add<>(M, List.of(spec("p1", 40, 10))));
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));
        assertThat(loggedIn).containsEntry("p1", "secret-of-p1"); // the client opened the leader's sealing
        Duration add = awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(50);
        assertThat(client.tryAcquire(1)).isEmpty();

        // UPDATE raising the limit to 80: 30 more, without restarting anything
        apply(leader, new Operation.Update<>(List.of(spec("p1", 70, 10))));
        Duration update = awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(30);

        // RESET_QUOTA: the whole limit again
        apply(leader, new Operation.ResetQuota<>(List.of("p1")));
        Duration reset = awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(80);
        assertThat(provisioner.ledger().usage("p1", thisMonth()).used()).isEqualTo(80);

        // Redis loses everything of the cluster: the leader's reconciliation (every 1 s) provisions again
        long corrections = leader.quotaSync().corrections();
        RedissonClient operator = RedisSupport.client(url);
        try {
            RedisSupport.drop(operator, provisioner.ledger().keys());
        } finally {
            operator.shutdown();
        }
        assertThat(provisioner.ledger().usage("p1", thisMonth()).limit()).isZero();
        Duration repaired = awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(80);
        assertThat(leader.quotaSync().corrections()).isGreaterThan(corrections);
        assertThat(repaired).isLessThan(Duration.ofSeconds(10));

        // DELETE: the limit goes to 0 (and the PID is revoked)
        apply(leader, new Operation.Delete<>(List.of("p1")));
        await().atMost(WAIT)
                .until(() -> provisioner.ledger().usage("p1", thisMonth()).limit() == 0);
        await().atMost(WAIT).until(() -> client.heldPids().isEmpty());
        assertThat(client.tryAcquire(1)).isEmpty();

        org.slf4j.LoggerFactory.getLogger(QuotaProvisioningIT.class)
                .info(
                        "first grant after DEALED: add {} ms, update {} ms, reset {} ms; after a wipe {} ms",
                        add.toMillis(),
                        update.toMillis(),
                        reset.toMillis(),
                        repaired.toMillis());
    }

    @Test
    void aNewLeaderProvisionsEveryPidAndAChangeCommittedWhileRedisIsDownArrivesLater() throws Exception {
        RedisProcess redis = RedisProcess.start(true); // durable: usage survives the restart
        closeables.add(redis);
        // a PID in the database that nobody ever provisioned (say, from before Redis was wired)
        cluster.repositories.modules().put(io.pidpool.core.model.ModuleConfig.of(M, 1));
        cluster.repositories
                .pids()
                .insertAll(List.of(new io.pidpool.core.model.PidRecord(
                        "p1",
                        M,
                        40,
                        10,
                        io.pidpool.core.model.PidAvailability.ACTIVE,
                        sealer.seal("secret-of-p1"),
                        Map.of())));
        RedisQuotaProvisioner provisioner = provisioner(redis.url());
        ClusterMember leader = startLeader(provisioner);
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> provisioner.ledger().usage("p1", thisMonth()).limit() == 50);
        PidClient client = startClient(redis.url());
        await().atMost(WAIT).until(() -> client.heldPids().equals(Set.of("p1")));
        awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(50);

        // Redis is down when the UPDATE commits: the batch is applied all the same...
        redis.kill();
        apply(leader, new Operation.Update<>(List.of(spec("p1", 70, 10))));
        assertThat(cluster.pid("p1").hardLimit()).isEqualTo(80);
        assertThat(redis.alive()).isFalse();
        // ...and the leader provisions it once Redis is back
        redis.restart();
        Duration late = awaitFirstGrant(client);
        assertThat(1 + drain(client)).isEqualTo(30);
        assertThat(provisioner.ledger().usage("p1", thisMonth()).used()).isEqualTo(80);
        org.slf4j.LoggerFactory.getLogger(QuotaProvisioningIT.class)
                .info("first grant after Redis came back: {} ms", late.toMillis());
    }
}
