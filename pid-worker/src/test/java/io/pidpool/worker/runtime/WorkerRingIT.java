package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.runtime.WorkerCluster.Execution;
import io.pidpool.worker.runtime.WorkerCluster.Member;
import io.pidpool.worker.task.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Four workers on real ZooKeeper and a real task table (H2; PostgreSQL and MariaDB when
 * configured), 10,000 tasks with an idempotent handler.
 */
class WorkerRingIT {
    static final int TASKS = 10_000;
    static final WorkerConfig CONFIG = WorkerConfig.builder()
            .virtualNodes(128)
            .batchSize(50)
            .concurrency(2)
            .pollInterval(Duration.ofMillis(200))
            .lease(Duration.ofSeconds(4))
            .handlerTimeout(Duration.ofSeconds(2))
            .retryBackoff(Duration.ofMillis(100))
            .reapInterval(Duration.ofMillis(500))
            .backlogInterval(Duration.ofSeconds(1))
            .shutdownTimeout(Duration.ofSeconds(3))
            .build();

    static ZooKeeperFixture zk;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new ZooKeeperFixture();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zk.close();
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void aSteadyRingRunsEveryTaskOnceOnItsOwner(TestDatabase.Kind kind) throws Exception {
        try (WorkerCluster c = new WorkerCluster(zk, TestDatabase.open(kind, false, 10), CONFIG)) {
            for (String name : List.of("w1", "w2", "w3", "w4")) {
                c.start(name);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> c.allLiveSee(4));
            c.enqueue(TASKS);

            await().atMost(Duration.ofSeconds(60)).until(() -> c.done() == TASKS);

            assertThat(c.effect).isEqualTo(c.expected);
            assertThat(c.duplicates())
                    .as("no ring change, no crash: no task runs twice")
                    .isZero();
            assertThat(c.executions).hasSize(TASKS);
            ConsistentHashRing ring = c.ring();
            for (Execution e : c.executions) {
                assertThat(ring.ownerOf(e.slot()))
                        .as("task %d ran on its owner", e.taskId())
                        .contains(e.worker());
            }
            assertThat(c.members.values().stream()
                            .mapToLong(m -> m.metrics.claimConflicts())
                            .sum())
                    .isZero();
            assertThat(c.members.values().stream()
                            .mapToLong(m -> m.metrics.done())
                            .sum())
                    .isEqualTo(TASKS);
            System.out.printf(
                    "[worker-ring %s] steady: %d tasks, per worker %s, max/min share %.3f%n",
                    kind,
                    TASKS,
                    c.members.values().stream()
                            .map(m -> m.name + "=" + m.metrics.done())
                            .toList(),
                    ring.maxMinShareRatio());
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void aKilledWorkerAndAnAddedWorkerLoseNothing(TestDatabase.Kind kind) throws Exception {
        try (WorkerCluster c = new WorkerCluster(zk, TestDatabase.open(kind, false, 12), CONFIG)) {
            c.work = Duration.ofMillis(3);
            // w2 dies inside its own handler after 500 executions: in the middle of a claimed batch,
            // with tasks run but not yet marked DONE - the case that produces duplicates
            AtomicLong killedAtNanos = new AtomicLong();
            AtomicInteger victimRuns = new AtomicInteger();
            c.start("w1");
            c.start("w2", m -> task -> {
                c.recordingHandler(m).handle(task);
                if (victimRuns.incrementAndGet() == 500) {
                    killedAtNanos.set(System.nanoTime());
                    m.kill();
                }
            });
            c.start("w3");
            c.start("w4");
            await().atMost(Duration.ofSeconds(20)).until(() -> c.allLiveSee(4));
            Member victim = c.members.get("w2");
            List<SlotRange> deadRanges = c.members.get("w1").pool.ring().rangesOf(victim.pool.memberId());
            int sessionMs = ZooKeeperFixture.negotiatedTimeoutMs(victim.client);
            // T is what the workers asked for (the fixture's bounds admit it), not a server's rounding
            assertThat(sessionMs).isEqualTo(ZooKeeperFixture.SESSION_TIMEOUT_MS);
            c.enqueue(TASKS);

            await().atMost(Duration.ofSeconds(60)).until(() -> killedAtNanos.get() != 0);
            long killedAt = killedAtNanos.get();

            await().atMost(Duration.ofMillis(sessionMs + 10_000L)).until(() -> c.allLiveSee(3));
            long ringChangedAt = System.nanoTime();
            await().atMost(Duration.ofSeconds(60)).until(() -> c.executions.size() >= TASKS / 2);
            c.start("w5");
            await().atMost(Duration.ofSeconds(20)).until(() -> c.allLiveSee(4));

            await().atMost(Duration.ofSeconds(90)).until(() -> c.done() == TASKS);

            // exact final state despite the crash
            assertThat(c.effect).isEqualTo(c.expected);
            // duplicates only for tasks the dead worker had run but could not mark DONE: at most its batch
            Map<Long, List<Execution>> byTask = c.byTask();
            assertThat(byTask).hasSize(TASKS);
            long duplicates = c.duplicates();
            assertThat(duplicates).isBetween(1L, (long) CONFIG.batchSize());
            byTask.forEach((id, runs) -> {
                if (runs.size() > 1) {
                    assertThat(runs).as("task %d ran twice", id).anyMatch(e -> e.member()
                            .equals("w2"));
                    assertThat(runs).hasSize(2);
                }
            });

            // the dead worker's ranges were processed again within T + notification + one poll
            long recovered = c.executions.stream()
                    .filter(e -> e.nanos() > killedAt && !e.member().equals("w2"))
                    .filter(e -> deadRanges.stream().anyMatch(r -> r.contains(e.slot())))
                    .mapToLong(Execution::nanos)
                    .min()
                    .orElseThrow();
            long recoveryMs = (recovered - killedAt) / 1_000_000;
            long ringMs = (ringChangedAt - killedAt) / 1_000_000;
            // ZooKeeper's part: the session expires T (+ one tick, 100 ms here) after the last heartbeat; loose for
            // a loaded machine. Ours: once the survivors see the ring, the ranges run within one
            // poll interval plus a batch.
            long bound = ringMs + CONFIG.pollInterval().toMillis() + 1_000;
            System.out.printf(
                    "[worker-ring %s] kill: T=%d ms (zookeeper %s), ring without the dead worker after <= %d ms, its ranges"
                            + " processed again after %d ms (bound %d ms); duplicates %d (window %d);"
                            + " claim conflicts %d; reaped %d%n",
                    kind,
                    sessionMs,
                    zk.serverSettings(),
                    ringMs,
                    recoveryMs,
                    bound,
                    duplicates,
                    CONFIG.batchSize(),
                    c.members.values().stream()
                            .mapToLong(m -> m.metrics.claimConflicts())
                            .sum(),
                    c.members.values().stream()
                            .mapToLong(m -> m.metrics.reapedReturned())
                            .sum());
            System.out.printf("[worker-ring %s] dead worker's metrics: %s%n", kind, victim.metrics);
            assertThat(ringMs).isLessThanOrEqualTo(sessionMs + 5_000L);
            assertThat(recoveryMs).isLessThanOrEqualTo(bound);
            // the new worker took work only from its neighbours' ranges and did run tasks
            assertThat(c.executions).anyMatch(e -> e.member().equals("w5"));
        }
    }
}
