package io.pidpool.server.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.advice.AlertState;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.config.AdviceConfig;
import io.pidpool.server.leader.ClusterMember;
import io.pidpool.server.leader.LeaderSettings;
import io.pidpool.server.redis.RedisQuotaProvisioner;
import io.pidpool.server.redis.RedisUsageReader;
import io.pidpool.server.runtime.NodeUsageFacts;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.usage.UsageMonitor;
import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * Monitoring and advice with the real leader: a {@link ClusterMember} on curator-test ZooKeeper and
 * H2, its quota provisioned in a real Redis, the {@link AdviceSetup} wired as {@code PidServer} does
 * (leader sink, cooldown threshold, monitor, auto-apply), usage spent through the Redis quota ledger.
 */
class AdviceIT {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final ModuleKey SHORT = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey SLACK = ModuleKey.parse("ops#monitor#collector");
    static final ModuleKey FLAKY = ModuleKey.parse("hr#pay#roll");

    final String quotaCluster = RedisSupport.randomCluster();
    final AtomicLong ids = new AtomicLong(System.currentTimeMillis() << 12);
    final Clock clock = Clock.systemUTC();
    UsageMonitor usage;
    TestCluster cluster;
    RedissonClient redis;
    RedisQuotaProvisioner provisioner;
    AdviceSetup setup;

    @BeforeEach
    void setUp() {
        cluster = new TestCluster();
        redis = RedisSupport.client(RedisSupport.sharedUrl());
        provisioner = RedisQuotaProvisioner.builder()
                .redisson(redis)
                .cluster(quotaCluster)
                .clientId("leader-s1")
                .zone(ZoneOffset.UTC)
                .build();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (usage != null) {
            usage.close();
        }
        if (setup != null) {
            setup.close();
        }
        cluster.close();
        RedisSupport.drop(redis, provisioner.ledger().keys());
        provisioner.close();
        redis.shutdown();
    }

    static AdviceConfig config() {
        AdviceConfig d = AdviceConfig.defaults();
        return new AdviceConfig(
                300,
                d.utilisationPercents(),
                true,
                BigDecimal.ZERO,
                d.maxPidAlerts(),
                1, // one failed login puts a PID in cooldown
                3_000,
                d.massFailureShare(),
                List.of(new AdviceConfig.TariffTier(null, new BigDecimal("0.01"))),
                d.webhook(),
                d.recommendations(),
                // one move per hour: the throttle, not the recommender, bounds this test's moves
                new AdviceConfig.AutoApplyConfig(true, 1, 3_600_000, true));
    }

    ClusterMember startLeader() {
        setup = new AdviceSetup(
                config(),
                "test",
                cluster.database.alerts(),
                cluster.database.dataSource(),
                "default",
                ids::incrementAndGet,
                clock);
        LeaderSettings settings = setup.leaderSettings(TestCluster.settings());
        ClusterMember node = cluster.startNode("s1", b -> b.quotaProvisioner(provisioner)
                .quotaReconcileInterval(Duration.ofSeconds(1))
                .settings(settings)
                .placement(setup.placement(settings))
                .alerts(setup.leaderSink()));
        await().atMost(WAIT).until(node::isLeader);
        return node;
    }

    /** The leader's usage scan as the server runs it, every 300 ms. */
    UsageMonitor usageScan(ClusterMember node) {
        usage = new UsageMonitor(
                        new NodeUsageFacts(node, cluster.database.moduleMoves()),
                        new RedisUsageReader(redis, provisioner.ledger().keys()),
                        new MonthlyWindow(ZoneOffset.UTC),
                        config().overageTariff(),
                        UsageProjector.blended(),
                        clock,
                        Duration.ofMillis(300))
                .start(Duration.ofMillis(100));
        return usage;
    }

    /** Spends a PID's whole quota in Redis, once the leader has provisioned its limit. */
    void spendAll(String pid, long amount) {
        QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).monthOf(clock.instant());
        await().atMost(WAIT).until(() -> provisioner
                .ledger()
                .tryDeduct(pid, month, amount, "d-" + pid)
                .granted());
    }

    List<AuditEntry> applied() {
        return cluster.repositories.audit().recent(1_000).stream()
                .filter(e -> e.action().equals("advice.applied"))
                .toList();
    }

    @Test
    void theLeaderAutoAppliesOneThrottledAuditedMigrateThatMovesQuotaToTheModuleThatIsShort() {
        List<String> shortPids = cluster.addPids(SHORT, 1, "a", 2);
        List<String> slackPids = cluster.addPids(SLACK, 1, "b", 4);
        ClusterMember node = startLeader();
        shortPids.forEach(pid -> spendAll(pid, 10_000));

        setup.startMonitor(node, cluster.repositories, usageScan(node));

        await().atMost(WAIT).until(() -> applied().size() == 1);
        AuditEntry audit = applied().get(0);
        assertThat(audit.actor()).isEqualTo(AutoApplier.ACTOR);
        assertThat(audit.detail())
                .contains("auto-applied 1 of")
                .contains(SHORT + " is short")
                .contains(SLACK + " has slack");
        BatchId batchId = new BatchId(Long.parseLong(audit.target()));
        await().atMost(WAIT).until(() -> node.batches()
                .get(batchId)
                .map(b -> b.status() == BatchStatus.DEALED)
                .orElse(false));
        BatchRecord batch = node.batches().get(batchId).orElseThrow();
        assertThat(batch.requestedBy()).isEqualTo(AutoApplier.ACTOR);
        assertThat(cluster.repositories.audit().forTarget(audit.target(), 10))
                .extracting(AuditEntry::action)
                .containsExactlyInAnyOrder("batch.accepted", "advice.applied");
        List<String> moved = slackPids.stream()
                .filter(pid -> cluster.pid(pid).module().equals(SHORT))
                .toList();
        assertThat(moved).hasSize(1);

        // the monitor keeps running every 300 ms; the throttle (1 move per hour) admits nothing more
        await().during(Duration.ofSeconds(3))
                .atMost(Duration.ofSeconds(10))
                .until(() -> applied().size() == 1);
        assertThat(slackPids.stream().filter(pid -> cluster.pid(pid).module().equals(SHORT)))
                .hasSize(1);

        // both exhausted PIDs are alerted once each, however many rounds saw them
        for (String pid : shortPids) {
            List<StoredAlert> episodes = setup.alerts().recent(1_000).stream()
                    .filter(a -> a.key().equals("PID_UTILISATION:" + pid + ":100"))
                    .toList();
            assertThat(episodes).singleElement().satisfies(a -> {
                assertThat(a.state()).isEqualTo(AlertState.OPEN);
                assertThat(a.occurrences()).isGreaterThan(1);
            });
        }
    }

    @Test
    void aCooldownTheLeaderRaisesIsStoredOnceAndResolvedWhenItEnds() {
        cluster.addPids(FLAKY, 1, "c", 1);
        startLeader();
        setup.startMonitor(cluster.nodes.get(0), cluster.repositories, usageScan(cluster.nodes.get(0)));
        SimulatedInstance flaky = cluster.startInstance(FLAKY);
        flaky.failOn("c-0");

        await().atMost(WAIT).until(() -> setup.alerts().open().stream()
                .anyMatch(a -> a.key().equals("PID_COOLDOWN:c-0")));
        // the 3 s cooldown ends: the leader says so and the episode is resolved
        await().atMost(WAIT).until(() -> setup.alerts().recent(1_000).stream()
                .anyMatch(a -> a.key().equals("PID_COOLDOWN:c-0") && a.state() == AlertState.RESOLVED));
        assertThat(setup.alerts().open().stream().filter(a -> a.key().equals("PID_COOLDOWN:c-0")))
                .hasSizeLessThanOrEqualTo(1);
        assertThat(flaky.held()).doesNotContain("c-0");
    }

    @Test
    void theMassFailureBrakeIsStoredWhileEngagedAndResolvedWhenTheLeaderReleasesIt() {
        List<String> pids = cluster.addPids(FLAKY, 4, "m", 40);
        setup = new AdviceSetup(
                config(),
                "test",
                cluster.database.alerts(),
                cluster.database.dataSource(),
                "default",
                ids::incrementAndGet,
                clock);
        // the planner's brake with a 5 s window (production: advice.massFailureShare over 1 min), so
        // the brake releases within the test
        cluster.startNode("s1", b -> b.alerts(setup.leaderSink())
                .placement(grace -> new io.pidpool.server.leader.PlannerPlacement(
                        io.pidpool.core.allocation.PlannerPolicy.defaults(grace)
                                .withRebalanceDelay(Duration.ZERO)
                                .withBrake(0.5, Duration.ofSeconds(5)))));
        List<SimulatedInstance> doomed =
                List.of(cluster.startInstance(FLAKY), cluster.startInstance(FLAKY), cluster.startInstance(FLAKY));
        SimulatedInstance survivor = cluster.startInstance(FLAKY);
        await().atMost(WAIT).until(() -> cluster.settled(FLAKY, pids));
        for (SimulatedInstance sim : doomed) {
            sim.crash();
            cluster.remove(sim);
        }

        String key = "BRAKE_ENGAGED:" + FLAKY;
        await().atMost(WAIT).until(() -> setup.alerts().open().stream()
                .anyMatch(a -> a.key().equals(key)));
        StoredAlert engaged = setup.alerts().open().stream()
                .filter(a -> a.key().equals(key))
                .findFirst()
                .orElseThrow();
        assertThat(engaged.alert().severity()).isEqualTo(io.pidpool.core.advice.Severity.CRITICAL);
        // the window passes, the planner stops braking, the leader clears its key: resolved
        await().atMost(WAIT).until(() -> setup.alerts().recent(1_000).stream()
                .anyMatch(a -> a.id() == engaged.id() && a.state() == AlertState.RESOLVED));
        await().atMost(WAIT).until(() -> survivor.held().size() == 40);
        cluster.assertNoDoubleLogin();
    }
}
