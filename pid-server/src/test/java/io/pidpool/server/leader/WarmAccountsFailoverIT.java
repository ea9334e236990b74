package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A follower's warm copy of the accounts ({@link WarmAccounts}) is a head start, never the truth: a
 * copy that missed changes must be brought up to the database's account version before the new
 * leader's first pass decides anything. Here the copy is loaded once and never refreshed, then an
 * account is inserted, one updated and one deleted, then the leader goes. Both leaders reload the
 * database only every 10 minutes, so whatever the successor knows of those changes it learnt at its
 * term start: a successor that used the copy as it was would never hand out the new PID, keep the
 * deleted one held and the changed one stale.
 */
class WarmAccountsFailoverIT {
    static final ModuleKey A = ModuleKey.parse("fin#warm#copy");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void aStaleWarmCopyIsBroughtUpToDateBeforeTheFirstPass() throws Exception {
        LeaderSettings rareReloads = TestCluster.settings()
                .withIntervals(Duration.ofMinutes(10), Duration.ofSeconds(2), Duration.ofMillis(200));
        TestCluster.Settled settled = cluster.leaderWithTwoInstances(A, "w", 12, b -> b.settings(rareReloads));
        List<String> pids = settled.pids();
        ClusterMember old = settled.leader();
        SimulatedInstance first = settled.first();
        SimulatedInstance second = settled.second();

        // loaded once at start, then (for a day) never again
        ClusterMember successor =
                cluster.startNode("s2", b -> b.settings(rareReloads).warmAccountsInterval(Duration.ofDays(1)));
        await().atMost(Duration.ofSeconds(40)).until(() -> successor.warmAccountsVersion() >= 0);
        long warmVersion = successor.warmAccountsVersion();

        String changed = pids.get(0);
        String deleted = pids.get(1);
        PidRecord before = cluster.pid(changed);
        PidRecord after = new PidRecord(
                changed,
                A,
                before.monthlyQuota() + 777,
                before.overageAllowance(),
                before.status(),
                before.secret(),
                before.attributes());
        cluster.repositories.pids().update(after);
        cluster.repositories.pids().deleteAll(List.of(deleted));
        PidRecord fresh =
                new PidRecord("fresh", A, 10_000, 0, before.status(), TestCluster.secret("fresh"), before.attributes());
        cluster.repositories.pids().insert(fresh);
        assertThat(cluster.repositories.pids().loadAccounts().version()).isEqualTo(warmVersion + 3);
        assertThat(successor.warmAccountsVersion()).as("the copy is stale").isEqualTo(warmVersion);

        old.close();
        await().atMost(Duration.ofSeconds(40)).until(successor::isLeader);
        assertThat(successor.lastAccountsSource())
                .as("the term started from the copy, brought up to date")
                .startsWith("warm copy of version " + warmVersion + ",");

        CuratorFramework admin = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
        try {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                assertThat(first.held()).as("deleted").doesNotContain(deleted);
                assertThat(second.held()).as("deleted").doesNotContain(deleted);
                assertThat(holderOf("fresh", first, second))
                        .as("the new PID is handed out")
                        .isPresent();
                SimulatedInstance holder =
                        holderOf(changed, first, second).orElseThrow(() -> new AssertionError(changed + " not held"));
                PidNode node = PidNode.decode(admin.getData().forPath(TestCluster.LAYOUT.pid(A, holder.id(), changed)));
                assertThat(node.state()).isIn(PidState.ADDED, PidState.UPDATED);
                assertThat(node.account().monthlyQuota())
                        .as("the holder got the changed account")
                        .isEqualTo(after.monthlyQuota());
            });
        } finally {
            admin.close();
        }
        cluster.assertNoDoubleLogin();
    }

    private static Optional<SimulatedInstance> holderOf(String pid, SimulatedInstance... sims) {
        for (SimulatedInstance sim : sims) {
            if (sim.held().contains(pid)) {
                return Optional.of(sim);
            }
        }
        return Optional.empty();
    }
}
