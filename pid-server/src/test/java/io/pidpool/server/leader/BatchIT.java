package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.server.testing.SimulatedInstance;
import io.pidpool.server.testing.TestCluster;
import io.pidpool.server.testing.ZkTestSupport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class BatchIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey B = ModuleKey.parse("ops#audit#reader");

    @RegisterExtension
    final TestCluster cluster = new TestCluster();

    ClusterMember awaitLeader() {
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.leader() != null);
        return cluster.leader();
    }

    ClusterMember aFollower() {
        return cluster.nodes.stream().filter(n -> !n.isLeader()).findFirst().orElseThrow();
    }

    static List<PidSpec<String>> specs(String prefix, int count) {
        return IntStream.range(0, count)
                .mapToObj(i -> new PidSpec<>(prefix + "-" + i, "secret-" + i, 5_000, 0, Map.of()))
                .toList();
    }

    @Test
    void aBatchAcceptedByAFollowerIsAppliedAndEveryWaiterIsAnswered() throws Exception {
        List<String> pids = cluster.addPids(A, 2, "a", 20);
        for (String id : List.of("s1", "s2", "s3")) {
            cluster.startNode(id);
        }
        awaitLeader();
        cluster.startInstance(A);
        cluster.startInstance(A);
        SimulatedInstance inB = cluster.startInstance(B);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        ClusterMember follower = aFollower();

        BatchId id = follower.batches()
                .submit(
                        List.of(
                                new Operation.Add<>(A, specs("new", 10)),
                                new Operation.Update<>(
                                        List.of(new PidSpec<>("a-0", "rotated", 777, 3, Map.of("k", "v")))),
                                new Operation.Delete<>(List.of("a-1")),
                                new Operation.Migrate<>(List.of("a-2"), B),
                                new Operation.ResetQuota<>(List.of("a-3")),
                                new Operation.SetServers<>(A, 3, 123_000),
                                new Operation.Delete<>(List.of("nope"))),
                        "alice");
        // many requests wait on one server: one watcher, one poll
        List<CompletableFuture<BatchRecord>> waiters = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            waiters.add(follower.batches().await(id, Duration.ofSeconds(30)));
        }
        BatchRecord done = waiters.get(0).get(40, TimeUnit.SECONDS);
        for (var waiter : waiters) {
            assertThat(waiter.get(1, TimeUnit.SECONDS)).isEqualTo(done);
        }
        assertThat(follower.batches().waiting()).isZero();
        assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
        assertThat(done.results())
                .extracting(OperationResult::ok)
                .containsExactly(true, true, true, true, true, true, false);
        assertThat(done.results().get(6).message()).contains("nope");

        // the database changed once...
        assertThat(cluster.pid("new-9").secret()).isEqualTo(TestCluster.seal("secret-9"));
        assertThat(cluster.pid("a-0").monthlyQuota()).isEqualTo(777);
        assertThat(cluster.repositories.pids().find("a-1")).isEmpty();
        assertThat(cluster.pid("a-2").module()).isEqualTo(B);
        assertThat(cluster.repositories.modules().find(A).orElseThrow().servers())
                .isEqualTo(3);
        // ...and ZooKeeper follows: new PIDs held, a-1 revoked, a-2 moved to B, a-0 updated in place
        List<String> wanted = new ArrayList<>(pids);
        wanted.removeAll(List.of("a-1", "a-2"));
        wanted.addAll(specs("new", 10).stream().map(PidSpec::id).toList());
        await().atMost(Duration.ofSeconds(40))
                .until(() -> cluster.settled(A, wanted) && inB.held().equals(Set.of("a-2")));
        CuratorFramework reader = ZkTestSupport.client(cluster.zk.connectString(), TestCluster.LAYOUT.namespace());
        String holderOfA0 = cluster.holders().get("a-0").iterator().next();
        PidNode a0 = PidNode.decode(reader.getData()
                .forPath(TestCluster.LAYOUT.pid(A, io.pidpool.core.model.InstanceId.of(holderOfA0), "a-0")));
        reader.close();
        assertThat(a0.state()).isEqualTo(PidState.UPDATED);
        assertThat(a0.account().monthlyQuota()).isEqualTo(777);
        assertThat(a0.account().attributes()).containsEntry("k", "v");
        cluster.assertNoDoubleLogin();

        // audited, and bad input changes nothing
        assertThat(cluster.repositories.audit().forTarget(id.toString(), 10))
                .singleElement()
                .satisfies(e -> assertThat(e.actor()).isEqualTo("alice"));
        assertThatThrownBy(() -> follower.batches().submit(List.of(), "bob"))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        assertThat(cluster.repositories.operations().findUnfinished(10)).isEmpty();
    }

    @Test
    void aLeaderClosedInTheMiddleOfABatchLeavesItToItsSuccessorWhoAppliesItOnce() throws Exception {
        List<String> pids = cluster.addPids(A, 2, "a", 20);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Runnable stallFirstAttempt = () -> {
            if (first.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    never.await(); // until the node is closed, which interrupts it
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted mid-batch");
                }
            }
        };
        for (String id : List.of("s1", "s2", "s3")) {
            cluster.startNode(id, b -> b.batchHook(stallFirstAttempt));
        }
        ClusterMember leader = awaitLeader();
        cluster.startInstance(A);
        cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));
        Map<String, Set<String>> before = cluster.holders();

        BatchId id = aFollower().batches().submit(List.of(new Operation.Add<>(A, specs("new", 10))), "alice");
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        long failoverAt = System.nanoTime();
        leader.close(); // mid-transaction: rolled back, nothing committed

        ClusterMember successor = awaitLeader();
        assertThat(successor).isNotSameAs(leader);
        BatchRecord done = successor.batches().await(id, Duration.ofSeconds(30)).get(40, TimeUnit.SECONDS);
        assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
        assertThat(done.results()).singleElement().satisfies(r -> assertThat(r.ok())
                .isTrue());
        assertThat(done.epoch()).isEqualTo(successor.epoch());

        List<String> wanted = new ArrayList<>(pids);
        wanted.addAll(specs("new", 10).stream().map(PidSpec::id).toList());
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, wanted));
        // no PID moved because of the failover: the 20 held before are held where they were
        Map<String, Set<String>> after = cluster.holders();
        before.forEach((pid, holder) -> assertThat(after.get(pid)).as(pid).isEqualTo(holder));
        for (SimulatedInstance sim : cluster.instances) {
            assertThat(sim.events())
                    .filteredOn(e -> e.nanos() > failoverAt && !e.pid().startsWith("new-"))
                    .isEmpty();
        }
        cluster.assertNoDoubleLogin();
    }

    @Test
    void aLeaderWhoseSessionExpiresMidBatchCannotApplyItTwice() throws Exception {
        List<String> pids = cluster.addPids(A, 1, "a", 10);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean first = new AtomicBoolean(true);
        Runnable stallFirstAttempt = () -> {
            if (first.compareAndSet(true, false)) {
                entered.countDown();
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted mid-batch");
                }
            }
        };
        for (String id : List.of("s1", "s2")) {
            cluster.startNode(id, b -> b.batchHook(stallFirstAttempt));
        }
        ClusterMember old = awaitLeader();
        cluster.startInstance(A);
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, pids));

        BatchId id = old.batches().submit(List.of(new Operation.Add<>(A, specs("new", 5))), "alice");
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        ZkTestSupport.expireOnServer(old.curator(), cluster.zk.connectString());
        await().atMost(Duration.ofSeconds(40))
                .until(() -> cluster.nodes.stream().anyMatch(n -> n != old && n.isLeader()));
        release.countDown(); // the deposed leader's transaction goes on; the batch row serialises the two

        ClusterMember any = cluster.nodes.get(1);
        BatchRecord done = any.batches().await(id, Duration.ofSeconds(30)).get(40, TimeUnit.SECONDS);
        assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
        assertThat(done.results()).singleElement().satisfies(r -> assertThat(r.ok())
                .isTrue());
        assertThat(cluster.repositories.pids().findAll(List.of("new-0", "new-1", "new-2", "new-3", "new-4")))
                .hasSize(5);
        List<String> wanted = new ArrayList<>(pids);
        wanted.addAll(specs("new", 5).stream().map(PidSpec::id).toList());
        await().atMost(Duration.ofSeconds(40)).until(() -> cluster.settled(A, wanted));
        cluster.assertNoDoubleLogin();
    }
}
