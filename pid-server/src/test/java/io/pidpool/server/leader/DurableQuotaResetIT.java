package io.pidpool.server.leader;

import static io.pidpool.server.leader.QuotaProvisioningIT.WAIT;
import static io.pidpool.server.leader.QuotaProvisioningIT.apply;
import static io.pidpool.server.leader.QuotaProvisioningIT.spec;
import static io.pidpool.server.leader.QuotaProvisioningIT.thisMonth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.server.redis.RedisQuotaProvisioner;
import io.pidpool.server.testing.TestCluster;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Durable RESET_QUOTA (docs/quota.md §6a): a reset committed while Redis is down, whose leader dies
 * before Redis comes back, is applied by the next leader's reconciliation from the generation recorded
 * with the batch ({@code quota_reset}, V6) and the marker Redis keeps next to the counters, exactly
 * once. Real redis-server process of the test's own ({@link RedisProcess}, append-only, so usage
 * survives its restart), H2 through the Jdbi adapters, curator-test ZooKeeper.
 */
class DurableQuotaResetIT {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");

    final String quotaCluster = RedisSupport.randomCluster();
    final List<AutoCloseable> closeables = new ArrayList<>();
    TestCluster cluster;
    RedisProcess redis;

    @BeforeEach
    void setUp() {
        cluster = new TestCluster();
        redis = RedisProcess.start(true);
        closeables.add(redis);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        cluster.close();
    }

    RedisQuotaProvisioner provisioner(String node) {
        RedissonClient client = RedisSupport.client(redis.url());
        RedisQuotaProvisioner provisioner = RedisQuotaProvisioner.builder()
                .redisson(client)
                .cluster(quotaCluster)
                .clientId("leader-" + node)
                .zone(ZoneOffset.UTC)
                .build();
        closeables.add(() -> {
            provisioner.close();
            client.shutdown();
        });
        return provisioner;
    }

    ClusterMember startLeader(String id, RedisQuotaProvisioner provisioner, QuotaResetLog resets) {
        ClusterMember node = cluster.startNode(id, b -> b.cluster(quotaCluster)
                .quotaProvisioner(provisioner)
                .quotaResets(resets)
                .quotaReconcileInterval(Duration.ofMillis(500))
                .quotaRetryDelay(Duration.ofMillis(200)));
        await().atMost(WAIT).until(node::isLeader);
        return node;
    }

    static long used(RedissonQuotaLedger ledger) {
        return ledger.usage("p1", thisMonth()).used();
    }

    static void spend(RedissonQuotaLedger ledger, long n) {
        assertThat(ledger.tryDeduct("p1", thisMonth(), n, "d-" + UUID.randomUUID())
                        .granted())
                .isTrue();
    }

    @Test
    void aResetLostWithItsLeaderWhileRedisWasDownIsAppliedByTheNextLeaderExactlyOnce() throws Exception {
        RedisQuotaProvisioner first = provisioner("s1");
        ClusterMember s1 = startLeader("s1", first, cluster.database.quotaResets());
        apply(s1, new Operation.Add<>(M, List.of(spec("p1", 40, 10))));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> first.ledger().usage("p1", thisMonth()).limit() == 50);
        spend(first.ledger(), 30);

        // Redis is down when RESET_QUOTA commits, and the committing leader dies before it is back
        redis.kill();
        apply(s1, new Operation.ResetQuota<>(List.of("p1")));
        assertThat(cluster.database.quotaResets().latest())
                .extracting(QuotaResetLog.Reset::pidId, QuotaResetLog.Reset::generation)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("p1", 1L));
        s1.close();
        redis.restart();
        RedisQuotaProvisioner second = provisioner("s2");
        await().atMost(WAIT).ignoreExceptions().until(() -> second.ledger() != null);
        assertThat(used(second.ledger())).as("the reset was lost with s1").isEqualTo(30);

        // a new leader: its first reconciliation applies the recorded reset
        ClusterMember s2 = startLeader("s2", second, cluster.database.quotaResets());
        await().atMost(WAIT).until(() -> used(second.ledger()) == 0);
        assertThat(s2.quotaSync().resetsRepaired()).isEqualTo(1);

        // new usage after the reset survives later reconciliations: the reset is not applied again
        spend(second.ledger(), 20);
        long after = s2.quotaSync().reconciliations();
        await().atMost(WAIT).until(() -> s2.quotaSync().reconciliations() >= after + 3);
        assertThat(used(second.ledger())).isEqualTo(20);
        assertThat(s2.quotaSync().resetsRepaired()).isEqualTo(1);

        // an ordinary reset with Redis up: generation 2, applied once at commit, never again
        apply(s2, new Operation.ResetQuota<>(List.of("p1")));
        await().atMost(WAIT).until(() -> used(second.ledger()) == 0);
        spend(second.ledger(), 7);
        long later = s2.quotaSync().reconciliations();
        await().atMost(WAIT).until(() -> s2.quotaSync().reconciliations() >= later + 3);
        assertThat(used(second.ledger())).isEqualTo(7);
        assertThat(cluster.database.quotaResets().latest())
                .extracting(QuotaResetLog.Reset::generation)
                .containsExactly(2L);
        assertThat(s2.quotaSync().resetsRepaired()).isEqualTo(1);
    }

    @Test
    void withoutTheResetLogTheSameResetStaysLost() throws Exception {
        // the control: the same story with QuotaResetLog.none() (what the leader did before V6)
        RedisQuotaProvisioner first = provisioner("s1");
        ClusterMember s1 = startLeader("s1", first, QuotaResetLog.none());
        apply(s1, new Operation.Add<>(M, List.of(spec("p1", 40, 10))));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> first.ledger().usage("p1", thisMonth()).limit() == 50);
        spend(first.ledger(), 30);
        redis.kill();
        apply(s1, new Operation.ResetQuota<>(List.of("p1")));
        s1.close();
        redis.restart();
        RedisQuotaProvisioner second = provisioner("s2");
        ClusterMember s2 = startLeader("s2", second, QuotaResetLog.none());
        long start = s2.quotaSync().reconciliations();
        await().atMost(WAIT).ignoreExceptions().until(() -> s2.quotaSync().reconciliations() >= start + 3);
        assertThat(used(second.ledger())).isEqualTo(30);
    }
}
