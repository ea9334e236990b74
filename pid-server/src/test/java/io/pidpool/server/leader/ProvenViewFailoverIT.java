package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import io.pidpool.server.zk.TreeWatcher;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A successor starts its term from the view its {@code /modules} watcher kept, without scanning, only
 * when the watcher proves that view current ({@link TreeWatcher#proveCurrent}); after an interrupted
 * connection whose rescan has not finished, it scans as before. Either way no PID moves and nobody
 * logs in twice.
 */
class ProvenViewFailoverIT {
    static final ModuleKey A = ModuleKey.parse("fin#proven#view");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    @Test
    void aFollowerThatFollowedEverythingSkipsTheScanAndMovesNothing() throws Exception {
        TestCluster.Settled settled = cluster.leaderWithTwoInstances(A, "p", 30, b -> b);
        List<String> pids = settled.pids();
        ClusterMember old = settled.leader();
        SimulatedInstance first = settled.first();
        SimulatedInstance second = settled.second();
        ClusterMember successor = cluster.startNode("s2");
        await().atMost(Duration.ofSeconds(40))
                .until(() -> successor.pids(A, PidState.ADDED).size() == pids.size());
        int[] events = eventCounts(first, second);

        old.close();
        await().atMost(Duration.ofSeconds(40)).until(successor::isLeader);

        TreeFollower.Proof start = successor.lastTermStart();
        assertThat(start.current()).as("scan skipped, else: " + start.reason()).isTrue();
        assertFailoverMovedNothing(successor, pids, first, second, events);
    }

    @Test
    void aFollowerWhoseConnectionWasInterruptedScans() throws Exception {
        TestCluster.Settled settled = cluster.leaderWithTwoInstances(A, "q", 30, b -> b);
        List<String> pids = settled.pids();
        ClusterMember old = settled.leader();
        SimulatedInstance first = settled.first();
        SimulatedInstance second = settled.second();
        // its rescan after the reconnection would come only after the election
        ClusterMember successor = cluster.startNode("s2", b -> b.rescanDelay(Duration.ofMinutes(5)));
        await().atMost(Duration.ofSeconds(40))
                .until(() -> successor.pids(A, PidState.ADDED).size() == pids.size());
        long scans = successor.watcherScans();
        ZkTestSupport.interruptConnection(successor.curator());
        int[] events = eventCounts(first, second);

        old.close();
        await().atMost(Duration.ofSeconds(40)).until(successor::isLeader);

        TreeFollower.Proof start = successor.lastTermStart();
        assertThat(start.current()).as("the term scanned").isFalse();
        // the same session back ("interrupted") or, if the reconnection took longer than the session
        // timeout, a new one ("no scan since the last (re)connection")
        assertThat(start.reason()).containsAnyOf("interrupted", "no scan since");
        assertThat(successor.watcherScans())
                .as("the watcher's rescan still waits")
                .isEqualTo(scans);
        assertFailoverMovedNothing(successor, pids, first, second, events);
    }

    private void assertFailoverMovedNothing(
            ClusterMember successor, List<String> pids, SimulatedInstance first, SimulatedInstance second, int[] from) {
        await().atMost(Duration.ofSeconds(40))
                .until(() -> successor.pids(A, PidState.ADDED).size() == pids.size() && cluster.settled(A, pids));
        // a few passes after the start: a wrong view would have moved something by now
        long passes = successor.passes();
        await().atMost(Duration.ofSeconds(20)).until(() -> successor.passes() >= passes + 3);
        assertThat(cluster.settled(A, pids)).isTrue();
        assertThat(moves(first, from[0]) + moves(second, from[1]))
                .as("PIDs assigned or revoked since the failover")
                .isZero();
        cluster.assertNoDoubleLogin();
    }

    private static int[] eventCounts(SimulatedInstance first, SimulatedInstance second) {
        return new int[] {first.events().size(), second.events().size()};
    }

    private static long moves(SimulatedInstance sim, int from) {
        List<SimulatedInstance.Event> all = sim.events();
        return all.subList(from, all.size()).stream()
                .filter(e -> e.kind().equals("ASSIGNED") || e.kind().equals("REVOKED"))
                .count();
    }
}
