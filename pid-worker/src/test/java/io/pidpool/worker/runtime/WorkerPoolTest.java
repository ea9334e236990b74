package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.worker.ring.GroupRing;
import io.pidpool.worker.ring.StaticRingMembership;
import io.pidpool.worker.task.InMemoryTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TypedRanges;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The pool's lifecycle and wiring without ZooKeeper: a hand-set ring and the in-memory store. */
class WorkerPoolTest {
    private final InMemoryTaskStore store = new InMemoryTaskStore();

    private WorkerPool.Builder builder() {
        return WorkerPool.builder()
                .group("g")
                .taskStore(store)
                .membership(StaticRingMembership.alone("w1"))
                .handler("t", task -> {})
                .config(WorkerConfig.builder()
                        .pollInterval(Duration.ofMillis(20))
                        .build());
    }

    @Test
    void runsTasksAndReportsThemThroughMicrometer() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkerPool pool = builder()
                .metrics(new MicrometerWorkerMetrics(registry, "g", "w1"))
                .build()
                .start();
        try {
            for (int i = 0; i < 30; i++) {
                store.enqueue(
                        NewTask.of("g", "t", "k" + i, "{}"), Clock.systemUTC().instant());
            }
            pool.wakeUp();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> store.countByStatus("g").getOrDefault(TaskStatus.DONE, 0L) == 30);
            await().atMost(Duration.ofSeconds(20))
                    .until(() ->
                            registry.counter("pidpool.worker.tasks.done", "group", "g", "member", "w1", "type", "t")
                                            .count()
                                    == 30.0);
            assertThat(pool.ownedRanges())
                    .containsExactly(TypedRanges.of(java.util.Set.of("t"), List.of(SlotRange.all())));
            assertThat(pool.types()).containsExactly("t");
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> pool.backlogByRange().keySet().equals(java.util.Set.of(SlotRange.all())));
            assertThat(registry.get("pidpool.worker.ranges").gauge().value()).isEqualTo(1.0);
            assertThat(pool.state()).isEqualTo(WorkerPool.State.STARTED);
            assertThatThrownBy(pool::start).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                    .isEqualTo(ErrorCode.ILLEGAL_STATE));
        } finally {
            pool.close();
        }
        assertThat(pool.state()).isEqualTo(WorkerPool.State.CLOSED);
        pool.close(); // idempotent
    }

    @Test
    void badBuildersNameTheField() {
        assertThatThrownBy(() -> WorkerPool.builder()
                        .group("g")
                        .taskStore(store)
                        .handler("t", t -> {})
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("curator"));
        assertThatThrownBy(() -> builder().group("a/b").build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("group"));
        assertThatThrownBy(() -> WorkerPool.builder()
                        .membership(StaticRingMembership.alone("w1"))
                        .handler("t", t -> {})
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("dataSource"));
        assertThatThrownBy(() -> builder().handler("t", t -> {}))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("type"));
        assertThatThrownBy(() -> builder().handler("a,b", t -> {}))
                .as("types are listed comma-separated in the ring node")
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("type"));
        assertThatThrownBy(() -> WorkerPool.builder()
                        .taskStore(store)
                        .membership(StaticRingMembership.alone("w1"))
                        .handlers(Map.of())
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("handlers"));
        assertThatThrownBy(() -> WorkerConfig.builder()
                        .handlerTimeout(Duration.ofSeconds(20))
                        .build())
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("handlerTimeout"));
    }

    @Test
    void tasksOfATypeNoMemberRunsStayPendingAndShowInTheUnhandledGauge() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // a ring that knows what its member runs (a ring set from a plain ConsistentHashRing assumes
        // every member runs every type, so it reports nothing as unhandled)
        WorkerPool pool = builder()
                .membership(new StaticRingMembership(
                        "w1", GroupRing.of(Map.of("w1", new GroupRing.Member(1, java.util.Set.of("t"))))))
                .config(WorkerConfig.builder()
                        .pollInterval(Duration.ofMillis(20))
                        .backlogInterval(Duration.ofMillis(50))
                        .build())
                .metrics(new MicrometerWorkerMetrics(registry, "g", "w1"))
                .build()
                .start();
        try {
            long orphan = store.enqueue(
                    NewTask.of("g", "orphan", "k", "{}"), Clock.systemUTC().instant());
            long mine = store.enqueue(
                    NewTask.of("g", "t", "k", "{}"), Clock.systemUTC().instant());
            pool.wakeUp();
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> store.find(mine).orElseThrow().status() == TaskStatus.DONE);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> registry.find("pidpool.worker.backlog.unhandled")
                                    .tag("type", "orphan")
                                    .gauge()
                            != null);
            assertThat(registry.get("pidpool.worker.backlog.unhandled")
                            .tag("type", "orphan")
                            .gauge()
                            .value())
                    .isEqualTo(1.0);
            assertThat(pool.unhandledBacklog()).containsExactly(Map.entry("orphan", 1L));
            assertThat(store.find(orphan).orElseThrow().attempts()).isZero();
            assertThat(store.find(orphan).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        } finally {
            pool.close();
        }
    }

    @Test
    void aPoolClosedBeforeStartingNeverRuns() {
        WorkerPool pool = builder().build();
        pool.close();
        assertThat(pool.state()).isEqualTo(WorkerPool.State.CLOSED);
        assertThatThrownBy(pool::start).isInstanceOf(PidPoolException.class);
    }
}
