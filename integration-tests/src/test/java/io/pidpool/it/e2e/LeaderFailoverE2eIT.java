package io.pidpool.it.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.PidRepository;
import io.pidpool.core.port.Repositories;
import io.pidpool.it.e2e.SdkInstance.Event;
import io.pidpool.it.e2e.SdkInstance.Gate;
import io.pidpool.it.e2e.SdkInstance.Kind;
import io.pidpool.it.leader.ServerLeaderUnderTest;
import io.pidpool.it.zk.ZooKeepers;
import io.pidpool.server.leader.ClusterMember;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Three real leader nodes; the leader is killed (its session expired by the ZooKeeper server, the
 * code path of a crash's session timeout) in the middle of an operator batch and in the middle of a
 * handoff. docs/design.md §2 promises 1 (no double login), 3 (no churn) and 4 (exactly once).
 */
class LeaderFailoverE2eIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    private static TestingServer zookeeper;
    private E2eWorld world;

    @BeforeAll
    static void startZooKeeper() {
        zookeeper = ZooKeepers.standalone();
    }

    @AfterAll
    static void stopZooKeeper() throws IOException {
        zookeeper.close();
    }

    @AfterEach
    void tearDown() {
        if (world != null) {
            world.close();
        }
    }

    /** Holds the first armed {@code insertAll} (inside a batch's transaction) until released. */
    static final class InsertStall {
        final AtomicBoolean armed = new AtomicBoolean();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        Repositories wrap(Repositories repos) {
            PidRepository real = repos.pids();
            PidRepository stalled = (PidRepository) Proxy.newProxyInstance(
                    PidRepository.class.getClassLoader(), new Class<?>[] {PidRepository.class}, (proxy, m, args) -> {
                        if (m.getName().equals("insertAll") && armed.compareAndSet(true, false)) {
                            entered.countDown();
                            try {
                                release.await(30, TimeUnit.SECONDS);
                            } catch (InterruptedException e) {
                                // the node is being closed: the process dies here, mid-transaction
                                Thread.currentThread().interrupt();
                                throw new IllegalStateException("killed mid-batch");
                            }
                        }
                        try {
                            return m.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
            return new Repositories(
                    repos.transactor(),
                    repos.modules(),
                    stalled,
                    repos.assignments(),
                    repos.slots(),
                    repos.operations(),
                    repos.audit(),
                    repos.usage(),
                    repos.fence());
        }
    }

    private static long sessionOf(ClusterMember node) throws Exception {
        return node.curator().getZookeeperClient().getZooKeeper().getSessionId();
    }

    /**
     * Waits until a node other than {@code old} leads. (The deposed node may still believe it leads
     * until it processes its session's expiry, which a stalled node does late.)
     */
    private ClusterMember awaitNewLeader(ClusterMember old) {
        await("a new leader")
                .atMost(E2eWorld.WAIT)
                .pollInterval(Duration.ofMillis(10))
                .until(() -> successorOf(old) != null);
        return successorOf(old);
    }

    private ClusterMember successorOf(ClusterMember old) {
        return world.leader.nodes().stream()
                .filter(n -> n != old && n.isLeader())
                .findFirst()
                .orElse(null);
    }

    /** How the leader dies in the middle of the batch's transaction. */
    enum Kill {
        /**
         * The ZooKeeper server expires its session (a crash's timeout, or a partition): a successor is
         * elected while the deposed node still finishes (and commits) the transaction it had begun.
         */
        SESSION_EXPIRED,
        /**
         * The node is closed abruptly (its latch and Curator client go, its threads are interrupted):
         * the transaction rolls back and the successor applies the batch.
         */
        CLOSED
    }

    @Test
    void aLeaderWhoseSessionExpiresInTheMiddleOfALargeBatchLeavesItAppliedExactlyOnceAndMovesNothing()
            throws Exception {
        batchFailover(Kill.SESSION_EXPIRED);
    }

    @Test
    void aLeaderClosedAbruptlyInTheMiddleOfALargeBatchLeavesItAppliedExactlyOnceAndMovesNothing() throws Exception {
        batchFailover(Kill.CLOSED);
    }

    private void batchFailover(Kill kill) throws Exception {
        InsertStall stall = new InsertStall();
        world = new E2eWorld(
                zookeeper.getConnectString(),
                "e2e-batch-failover-" + kill.name().toLowerCase(),
                3,
                stall::wrap);
        SdkInstance i1 = world.instance(A, "i1");
        SdkInstance i2 = world.instance(A, "i2");
        world.awaitAnswered(List.of(i1, i2));
        List<String> first = E2eWorld.pids("old", 20);
        world.leader.addPids(A, first);
        world.awaitSettled(A, first);
        Map<String, String> before = world.holders(A);

        List<String> added = E2eWorld.pids("big", 2_000);
        List<Operation<String>> ops = new ArrayList<>();
        for (int from = 0; from < added.size(); from += 500) {
            ops.add(new Operation.Add<>(A, ServerLeaderUnderTest.specs(added.subList(from, from + 500))));
        }
        ClusterMember old = world.leader.leader().orElseThrow();
        long killedEpoch = old.epoch().value();
        stall.armed.set(true);
        BatchId id = world.leader.submit(ops);
        assertThat(stall.entered.await(30, TimeUnit.SECONDS))
                .as("the leader started applying the batch")
                .isTrue();
        long killedAt = System.nanoTime();
        ClusterMember successor;
        if (kill == Kill.SESSION_EXPIRED) {
            assertThat(ZooKeepers.terminateSession(sessionOf(old))).isTrue();
            successor = awaitNewLeader(old);
            stall.release.countDown(); // the deposed leader's transaction goes on (and commits or fails)
        } else {
            old.close();
            successor = awaitNewLeader(old);
        }
        long electedAt = System.nanoTime();

        BatchRecord done = world.leader.awaitBatch(id, E2eWorld.WAIT);
        long dealedAt = System.nanoTime();
        assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
        assertThat(done.results()).hasSize(4).allSatisfy(r -> {
            assertThat(r.ok()).isTrue();
            assertThat(r.message()).isEqualTo("added 500");
        });
        assertThat(done.results()).extracting(OperationResult::index).containsExactly(0, 1, 2, 3);
        // the database holds every PID once, in the module
        List<PidRecord> stored = world.leader.repositories().pids().findByModule(A);
        assertThat(stored).hasSize(2_020);
        assertThat(stored.stream().map(PidRecord::id).distinct().count()).isEqualTo(2_020);
        assertThat(world.leader.repositories().operations().findUnfinished(10)).isEmpty();

        List<String> all = new ArrayList<>(first);
        all.addAll(added);
        world.awaitSettled(A, all);
        long settledAt = System.nanoTime();
        // no PID moved because of the failover: the 20 held before are held where they were, and
        // nobody got a callback about them after the kill
        Map<String, String> after = world.holders(A);
        before.forEach((pid, holder) -> assertThat(after.get(pid)).as(pid).isEqualTo(holder));
        for (SdkInstance instance : world.instances) {
            assertThat(instance.events())
                    .filteredOn(e -> e.nanos() > killedAt && e.pid().startsWith("old-"))
                    .isEmpty();
            assertThat(instance.count(Kind.REVOKED, 0)).as(instance.name()).isZero();
        }
        // each new PID was granted exactly once (no double hand-out by the two leaders)
        for (String pid : added) {
            assertThat(world.platform.logins(pid)).as(pid).hasSize(1);
        }
        assertThat(successor.isLeader()).isTrue();
        if (kill == Kill.CLOSED) {
            assertThat(done.epoch()).as("applied by the successor").isEqualTo(successor.epoch());
        }
        world.note(
                "batch applied by epoch (killed leader's epoch)", done.epoch().value() + " (" + killedEpoch + ")");
        world.assertSafety();
        world.timing("kill -> successor leads", electedAt - killedAt);
        world.timing("kill -> batch DEALED", dealedAt - killedAt);
        world.timing("kill -> 2,020 PIDs held", settledAt - killedAt);
    }

    @Test
    void aLeaderKilledMidHandoffLeavesTheMoveToItsSuccessorWithoutADoubleLogin() throws Exception {
        world = new E2eWorld(zookeeper.getConnectString(), "e2e-handoff-failover", 3);
        SdkInstance i1 = world.instance(A, "i1");
        SdkInstance i2 = world.instance(A, "i2");
        world.awaitAnswered(List.of(i1, i2));
        List<String> pids = E2eWorld.pids("h", 60);
        world.leader.addPids(A, pids);
        world.awaitSettled(A, pids);
        Map<String, String> before = world.holders(A);

        // freeze the handoff half-way: each old holder answers its first DELETING and then sits in
        // onRevoked; the joining instance sits in its first onAssigned (before logging in)
        AtomicBoolean firstRevokeDone1 = new AtomicBoolean();
        AtomicBoolean firstRevokeDone2 = new AtomicBoolean();
        Gate revokes1 = new Gate(e -> e.kind() == Kind.REVOKED && !firstRevokeDone1.compareAndSet(false, true));
        Gate revokes2 = new Gate(e -> e.kind() == Kind.REVOKED && !firstRevokeDone2.compareAndSet(false, true));
        Gate adds = new Gate(e -> e.kind() == Kind.ASSIGNED);
        i1.gate(revokes1);
        i2.gate(revokes2);
        ClusterMember old = world.leader.leader().orElseThrow();
        long joinAt = System.nanoTime();
        SdkInstance i3 = world.instance(A, "i3");
        i3.gate(adds);
        await("DELETING and ADDING in flight")
                .atMost(E2eWorld.WAIT)
                .until(() -> !adds.held().isEmpty()
                        && (!revokes1.held().isEmpty() || !revokes2.held().isEmpty()));
        long killedAt = System.nanoTime();
        assertThat(ZooKeepers.terminateSession(sessionOf(old))).isTrue();
        awaitNewLeader(old);
        long electedAt = System.nanoTime();
        revokes1.open();
        revokes2.open();
        adds.open();

        world.awaitSettled(A, pids);
        long settledAt = System.nanoTime();
        world.assertSafety();
        Map<String, String> after = world.holders(A);
        assertThat(E2eWorld.counts(after).values()).containsOnly(20);
        long moved = pids.stream()
                .filter(pid -> !before.get(pid).equals(after.get(pid)))
                .count();
        int minimum =
                E2eWorld.minimalMoves(new ArrayList<>(E2eWorld.counts(before).values()), 1);
        assertThat(moved).isEqualTo(minimum).isEqualTo(20);
        // the new leader completed the move without extra churn: 20 revocations, 20 grants
        long revocations = i1.count(Kind.REVOKED, joinAt) + i2.count(Kind.REVOKED, joinAt);
        assertThat(revocations).isEqualTo(minimum);
        assertThat(i3.count(Kind.ASSIGNED, 0)).isEqualTo(minimum);
        Set<String> gated = new TreeSet<>();
        adds.held().stream().map(Event::pid).forEach(gated::add);
        assertThat(gated).as("the ADDING in flight at the kill").isNotEmpty();
        world.timing("kill -> successor leads", electedAt - killedAt);
        world.timing("session expired -> move completed (20/20/20)", settledAt - killedAt);
    }
}
