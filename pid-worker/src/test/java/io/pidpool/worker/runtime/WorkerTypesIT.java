package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.worker.runtime.WorkerCluster.Execution;
import io.pidpool.worker.runtime.WorkerCluster.Member;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TestDatabase;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Workers of one group with different handler types on real ZooKeeper and a real task table (H2;
 * PostgreSQL and MariaDB when configured): a task is owned within the members that run its type,
 * so none fails for want of a handler, and a type nobody runs waits PENDING without using attempts.
 */
class WorkerTypesIT {
    static final WorkerConfig CONFIG =
            WorkerRingIT.CONFIG.toBuilder().virtualNodes(64).build();

    static ZooKeeperFixture zk;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new ZooKeeperFixture();
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zk.close();
    }

    private static List<Long> enqueue(WorkerCluster c, String type, String prefix, int n) {
        return c.store.enqueueAll(
                IntStream.range(0, n)
                        .mapToObj(i -> NewTask.of(WorkerCluster.GROUP, type, prefix + i, "{\"amount\":1}"))
                        .toList(),
                Clock.systemUTC().instant());
    }

    private static Task task(WorkerCluster c, long id) {
        return c.store.find(id).orElseThrow();
    }

    private static boolean all(WorkerCluster c, List<Long> ids, Predicate<Task> p) {
        return ids.stream().map(id -> task(c, id)).allMatch(p);
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.Kind.class)
    void eachTypeRunsOnlyOnMembersWithItsHandler(TestDatabase.Kind kind) throws Exception {
        try (WorkerCluster c = new WorkerCluster(zk, TestDatabase.open(kind, false, 10), CONFIG)) {
            Member ab = c.start("ab", Set.of("a", "b"));
            Member onlyA = c.start("only-a", Set.of("a"));
            await().atMost(Duration.ofSeconds(20)).until(() -> c.allLiveSee(2));

            // 1. a and b split by type: every b on the {a, b} worker, a on the owner of its slot
            List<Long> bs = enqueue(c, "b", "b-", 300);
            List<Long> as = enqueue(c, "a", "a-", 300);
            long nobody = enqueue(c, "c", "c-", 1).get(0);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> all(c, bs, t -> t.status().isFinal())
                            && all(c, as, t -> t.status().isFinal()));

            Map<String, Long> runsByMember =
                    c.executions.stream().collect(Collectors.groupingBy(Execution::member, Collectors.counting()));
            assertThat(c.store.countByStatus(WorkerCluster.GROUP))
                    .as("nothing FAILED for want of a handler; only the c task is left")
                    .containsExactlyInAnyOrderEntriesOf(Map.of(TaskStatus.DONE, 600L, TaskStatus.PENDING, 1L));
            for (long id : bs) {
                assertThat(executionsOf(c, id))
                        .as("b task %d", id)
                        .extracting(Execution::member)
                        .containsExactly("ab");
            }
            ConsistentHashRing ring = ab.pool.ring(); // both run a: the ring of a is the ring of both
            for (long id : as) {
                assertThat(executionsOf(c, id))
                        .as("a task %d", id)
                        .extracting(Execution::worker)
                        .containsExactly(ring.ownerOf(task(c, id).slot()).orElseThrow());
            }
            assertThat(as.stream()
                            .map(id -> executionsOf(c, id).get(0).member())
                            .distinct())
                    .containsExactlyInAnyOrder("ab", "only-a");
            Task c0 = task(c, nobody);
            assertThat(c0.status()).isEqualTo(TaskStatus.PENDING);
            assertThat(c0.attempts()).as("no member runs c: nobody claimed it").isZero();
            assertThat(c0.lastError()).isNull();
            assertThat(onlyA.metrics.failed() + onlyA.metrics.retried()).isZero();
            assertThat(ab.metrics.failed() + ab.metrics.retried()).isZero();

            // 2. the only b worker dies: b waits PENDING, a goes on
            ab.kill();
            await().atMost(Duration.ofMillis(ZooKeeperFixture.SESSION_TIMEOUT_MS + 10_000L))
                    .until(() -> onlyA.sees(1));
            List<Long> waiting = enqueue(c, "b", "b2-", 100); // older than the a tasks: fetched first if at all
            List<Long> moreAs = enqueue(c, "a", "a2-", 100);
            await().atMost(Duration.ofSeconds(30)).until(() -> all(c, moreAs, t -> t.status() == TaskStatus.DONE));
            List<Long> lastA = enqueue(c, "a", "a3-", 1); // one more full cycle of only-a after that
            await().atMost(Duration.ofSeconds(30)).until(() -> all(c, lastA, t -> t.status() == TaskStatus.DONE));
            assertThat(waiting).as("b tasks wait for a worker with a b handler").allSatisfy(id -> {
                assertThat(task(c, id).status()).isEqualTo(TaskStatus.PENDING);
                assertThat(task(c, id).attempts()).isZero();
            });

            // 3. a worker with b joins and runs them
            Member newB = c.start("new-b", Set.of("b"));
            await().atMost(Duration.ofSeconds(20)).until(() -> onlyA.sees(2) && newB.sees(2));
            await().atMost(Duration.ofSeconds(30)).until(() -> all(c, waiting, t -> t.status() == TaskStatus.DONE));
            for (long id : waiting) {
                assertThat(executionsOf(c, id)).extracting(Execution::member).containsExactly("new-b");
                assertThat(task(c, id).attempts()).isEqualTo(1);
            }
            assertThat(task(c, nobody).attempts()).isZero();
            assertThat(c.duplicates()).isZero();
            System.out.printf(
                    "[worker-types %s] runs per member before the kill %s; b waited for new-b: %d tasks%n",
                    kind, runsByMember, waiting.size());
        }
    }

    private static List<Execution> executionsOf(WorkerCluster c, long id) {
        return c.executions.stream().filter(e -> e.taskId() == id).toList();
    }
}
