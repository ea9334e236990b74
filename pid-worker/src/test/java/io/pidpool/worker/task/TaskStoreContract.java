package io.pidpool.worker.task;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link TaskStore} must do: run against the in-memory fake and the Jdbi store on H2,
 * PostgreSQL and MariaDB. Each test gets a fresh, empty store.
 */
public abstract class TaskStoreContract {
    protected static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");
    protected static final String GROUP = "g1";

    protected TaskStore store;

    /** A fresh, empty, migrated store. */
    protected abstract TaskStore openStore();

    /** Drops what {@link #openStore()} created. */
    protected void closeStore() {}

    @BeforeEach
    void open() {
        store = openStore();
    }

    @AfterEach
    void close() {
        closeStore();
    }

    private static NewTask task(String key) {
        return NewTask.of(GROUP, "t.echo", key, "{\"k\":\"" + key + "\"}");
    }

    private static Claim claim(String owner, long id, Instant now) {
        return new Claim(owner, id, now, now.plus(Duration.ofSeconds(30)));
    }

    private static List<TypedRanges> all() {
        return echo(List.of(SlotRange.all()));
    }

    /** The type of {@link #task} in {@code ranges}. */
    private static List<TypedRanges> echo(List<SlotRange> ranges) {
        return List.of(TypedRanges.of(Set.of("t.echo"), ranges));
    }

    @Test
    void enqueuedTasksArePendingWithTheirSlotAndOrderedIds() {
        List<Long> ids = store.enqueueAll(List.of(task("a"), task("b"), task("c")), T0);
        assertThat(ids).hasSize(3).isSorted().doesNotHaveDuplicates();
        Task a = store.find(ids.get(0)).orElseThrow();
        assertThat(a.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(a.slot()).isEqualTo(ConsistentHashRing.slotOf("a"));
        assertThat(a.group()).isEqualTo(GROUP);
        assertThat(a.type()).isEqualTo("t.echo");
        assertThat(a.key()).isEqualTo("a");
        assertThat(a.body()).isEqualTo("{\"k\":\"a\"}");
        assertThat(a.attempts()).isZero();
        assertThat(a.maxAttempts()).isEqualTo(NewTask.DEFAULT_MAX_ATTEMPTS);
        assertThat(a.nextAttemptAtMs()).isEqualTo(T0.toEpochMilli());
        assertThat(a.claimId()).isZero();
        assertThat(a.owner()).isNull();
        assertThat(store.find(-1)).isEmpty();
    }

    @Test
    void bodiesRoundTripLargeAndUnicode() {
        String body = "€ñ中文 " + "x".repeat(200_000);
        long id = store.enqueue(NewTask.of(GROUP, "t", "k", body), T0);
        assertThat(store.find(id).orElseThrow().body()).isEqualTo(body);
    }

    @Test
    void findPendingFiltersGroupRangeAndDueTimeOldestFirst() {
        List<String> keys = IntStream.range(0, 60).mapToObj(i -> "key-" + i).toList();
        store.enqueueAll(keys.stream().map(TaskStoreContract::task).toList(), T0);
        store.enqueue(NewTask.of("other", "t.echo", "key-0", "{}"), T0);
        store.enqueue(task("later").withNotBefore(T0.plusSeconds(60)), T0);

        List<Task> allDue = store.findPending(GROUP, all(), T0, 1000);
        assertThat(allDue).hasSize(60).extracting(Task::id).isSorted();
        assertThat(allDue).extracting(Task::group).containsOnly(GROUP);
        assertThat(store.findPending(GROUP, all(), T0.plusSeconds(60), 1000)).hasSize(61);
        assertThat(store.findPending(GROUP, all(), T0, 7))
                .extracting(Task::id)
                .containsExactlyElementsOf(
                        allDue.subList(0, 7).stream().map(Task::id).toList());

        long half = ConsistentHashRing.SLOT_COUNT / 2;
        List<SlotRange> lower = List.of(new SlotRange(0, half / 2), new SlotRange(half / 2, half));
        List<Task> low = store.findPending(GROUP, echo(lower), T0, 1000);
        List<Task> high =
                store.findPending(GROUP, echo(List.of(new SlotRange(half, ConsistentHashRing.SLOT_COUNT))), T0, 1000);
        assertThat(low).allMatch(t -> t.slot() < half);
        assertThat(high).allMatch(t -> t.slot() >= half);
        assertThat(low.size() + high.size()).isEqualTo(60);
        assertThat(store.findPending(GROUP, List.of(), T0, 10)).isEmpty();
        assertThat(store.findPending(GROUP, echo(List.of()), T0, 10)).isEmpty();
    }

    @Test
    void findPendingSelectsTypesPerRangeList() {
        List<NewTask> tasks = new ArrayList<>();
        for (int i = 0; i < 90; i++) {
            tasks.add(NewTask.of(GROUP, List.of("a", "b", "c").get(i % 3), "mixed-" + i, "{}"));
        }
        store.enqueueAll(tasks, T0);
        long half = ConsistentHashRing.SLOT_COUNT / 2;
        SlotRange low = new SlotRange(0, half);
        SlotRange high = new SlotRange(half, ConsistentHashRing.SLOT_COUNT);
        // a and b share one ring (the lower half is ours), c has its own (the upper half is ours)
        List<TypedRanges> selection =
                List.of(TypedRanges.of(Set.of("a", "b"), List.of(low)), TypedRanges.of(Set.of("c"), List.of(high)));

        List<Task> found = store.findPending(GROUP, selection, T0, 1000);

        long expected = tasks.stream()
                .filter(t -> t.type().equals("c") ? t.slot() >= half : t.slot() < half)
                .count();
        assertThat(found).hasSize((int) expected).extracting(Task::id).isSorted();
        assertThat(found).allMatch(t -> t.type().equals("c") ? t.slot() >= half : t.slot() < half);
        assertThat(found).extracting(Task::type).contains("a", "b", "c");
        assertThat(store.findPending(GROUP, List.of(TypedRanges.of(Set.of("d"), List.of(SlotRange.all()))), T0, 10))
                .as("a type without tasks")
                .isEmpty();
        assertThat(store.findPending(GROUP, selection, T0, 5))
                .extracting(Task::id)
                .containsExactlyElementsOf(
                        found.subList(0, 5).stream().map(Task::id).toList());
    }

    @Test
    void countsPerTypedRangeAndPerType() {
        List<NewTask> tasks = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            tasks.add(NewTask.of(GROUP, i % 3 == 0 ? "a" : "b", "typed-" + i, "{}"));
        }
        List<Long> ids = store.enqueueAll(tasks, T0);
        long half = ConsistentHashRing.SLOT_COUNT / 2;
        SlotRange low = new SlotRange(0, half);
        SlotRange high = new SlotRange(half, ConsistentHashRing.SLOT_COUNT);
        long aLow = tasks.stream()
                .filter(t -> t.type().equals("a") && t.slot() < half)
                .count();

        assertThat(store.countPending(GROUP, TypedRanges.of(Set.of("a"), List.of(low, high))))
                .containsExactly(Map.entry(low, aLow), Map.entry(high, 20 - aLow));
        assertThat(store.countPending(GROUP, TypedRanges.of(Set.of("a", "b"), List.of(SlotRange.all()))))
                .containsExactly(Map.entry(SlotRange.all(), 60L));
        assertThat(store.countPending(GROUP, TypedRanges.of(Set.of("z"), List.of(low))))
                .containsExactly(Map.entry(low, 0L));
        assertThat(store.countPendingByType(GROUP)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 20L, "b", 40L));

        store.claim(List.of(ids.get(0)), claim("w", 5, T0)); // an "a" task: RUNNING is not PENDING
        assertThat(store.countPendingByType(GROUP)).containsExactlyInAnyOrderEntriesOf(Map.of("a", 19L, "b", 40L));
        assertThat(store.countPendingByType("nobody")).isEmpty();
    }

    @Test
    void aClaimMovesPendingToRunningOnceAndCountsTheAttempt() {
        List<Long> ids = store.enqueueAll(List.of(task("a"), task("b")), T0);
        List<Task> won = store.claim(ids, claim("w1", 11, T0));
        assertThat(won).hasSize(2).allSatisfy(t -> {
            assertThat(t.status()).isEqualTo(TaskStatus.RUNNING);
            assertThat(t.owner()).isEqualTo("w1");
            assertThat(t.claimId()).isEqualTo(11);
            assertThat(t.attempts()).isEqualTo(1);
            assertThat(t.leaseUntilMs()).isEqualTo(T0.plusSeconds(30).toEpochMilli());
        });
        // a second worker that fetched the same rows before the first claimed them wins nothing
        assertThat(store.claim(ids, claim("w2", 22, T0))).isEmpty();
        assertThat(store.findPending(GROUP, all(), T0, 10)).isEmpty();
    }

    @Test
    void concurrentClaimsNeverWinOneTaskTwice() throws Exception {
        List<Long> ids = store.enqueueAll(
                IntStream.range(0, 200).mapToObj(i -> task("c" + i)).toList(), T0);
        int workers = 4;
        Map<Long, Long> winner = new ConcurrentHashMap<>();
        AtomicInteger doubles = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                long claimId = w + 1;
                fs.add(pool.submit(() -> {
                    List<Long> mine = new ArrayList<>(ids);
                    Collections.shuffle(mine);
                    go.await();
                    for (int i = 0; i < mine.size(); i += 20) {
                        for (Task t : store.claim(mine.subList(i, i + 20), claim("w" + claimId, claimId, T0))) {
                            if (winner.putIfAbsent(t.id(), claimId) != null) {
                                doubles.incrementAndGet();
                            }
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(doubles.get()).isZero();
        assertThat(winner).hasSize(200);
        for (long id : ids) {
            Task t = store.find(id).orElseThrow();
            assertThat(t.claimId()).isEqualTo(winner.get(id));
            assertThat(t.attempts()).isEqualTo(1);
        }
    }

    @Test
    void completeNeedsTheClaimThatHoldsTheTask() {
        List<Long> ids = store.enqueueAll(List.of(task("a"), task("b")), T0);
        store.claim(ids, claim("w1", 11, T0));
        assertThat(store.complete(99, ids, T0)).isZero();
        assertThat(store.complete(11, List.of(ids.get(0)), T0.plusSeconds(1))).isEqualTo(1);
        assertThat(store.complete(11, List.of(ids.get(0)), T0.plusSeconds(1))).isZero();
        Task done = store.find(ids.get(0)).orElseThrow();
        assertThat(done.status()).isEqualTo(TaskStatus.DONE);
        assertThat(done.updatedAtMs()).isEqualTo(T0.plusSeconds(1).toEpochMilli());
        assertThat(store.find(ids.get(1)).orElseThrow().status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(store.complete(11, List.of(), T0)).isZero();
    }

    @Test
    void aWorkerWhoseLeaseWasReapedAndReclaimedCannotSettle() {
        long id = store.enqueue(task("a"), T0);
        store.claim(List.of(id), claim("w1", 11, T0));
        ReapResult r = store.reapExpiredLeases(GROUP, T0.plusSeconds(31));
        assertThat(r).isEqualTo(new ReapResult(1, 0));
        Task back = store.find(id).orElseThrow();
        assertThat(back.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(back.lastError()).contains("w1").contains("expired");
        assertThat(back.claimId()).isZero();
        store.claim(List.of(id), claim("w2", 22, T0.plusSeconds(31)));
        assertThat(store.complete(11, List.of(id), T0.plusSeconds(32))).isZero();
        assertThat(store.fail(11, List.of(Failure.permanent(id, "late")), T0.plusSeconds(32)))
                .isZero();
        assertThat(store.release(11, List.of(id), T0.plusSeconds(32))).isZero();
        Task t = store.find(id).orElseThrow();
        assertThat(t.status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(t.owner()).isEqualTo("w2");
        assertThat(t.attempts()).isEqualTo(2);
        assertThat(store.complete(22, List.of(id), T0.plusSeconds(32))).isEqualTo(1);
    }

    @Test
    void reapingLeavesLiveLeasesAndFailsTasksOutOfAttempts() {
        long live = store.enqueue(task("live"), T0);
        long last = store.enqueue(task("last").withMaxAttempts(1), T0);
        long other = store.enqueue(NewTask.of("other", "t", "o", "{}"), T0);
        store.claim(List.of(live), new Claim("w1", 1, T0, T0.plusSeconds(60)));
        store.claim(List.of(last, other), claim("w1", 2, T0));
        assertThat(store.reapExpiredLeases(GROUP, T0.plusSeconds(30))).isEqualTo(ReapResult.NONE);
        assertThat(store.reapExpiredLeases(GROUP, T0.plusSeconds(31))).isEqualTo(new ReapResult(0, 1));
        Task failed = store.find(last).orElseThrow();
        assertThat(failed.status()).isEqualTo(TaskStatus.FAILED);
        assertThat(failed.lastError()).contains("expired");
        assertThat(store.find(live).orElseThrow().status()).isEqualTo(TaskStatus.RUNNING);
        assertThat(store.find(other).orElseThrow().status()).isEqualTo(TaskStatus.RUNNING);
    }

    @Test
    void failuresRetryLaterOrEndFailed() {
        List<Long> ids = store.enqueueAll(List.of(task("a"), task("b")), T0);
        store.claim(ids, claim("w1", 11, T0));
        int n = store.fail(
                11,
                List.of(Failure.retry(ids.get(0), "boom", T0.plusSeconds(5)), Failure.permanent(ids.get(1), "poison")),
                T0.plusSeconds(1));
        assertThat(n).isEqualTo(2);
        Task retry = store.find(ids.get(0)).orElseThrow();
        assertThat(retry.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(retry.nextAttemptAtMs()).isEqualTo(T0.plusSeconds(5).toEpochMilli());
        assertThat(retry.lastError()).isEqualTo("boom");
        assertThat(retry.attempts()).isEqualTo(1);
        Task failed = store.find(ids.get(1)).orElseThrow();
        assertThat(failed.status()).isEqualTo(TaskStatus.FAILED);
        assertThat(failed.lastError()).isEqualTo("poison");
        assertThat(store.findPending(GROUP, all(), T0.plusSeconds(4), 10)).isEmpty();
        assertThat(store.findPending(GROUP, all(), T0.plusSeconds(5), 10))
                .extracting(Task::id)
                .containsExactly(ids.get(0));
    }

    @Test
    void longErrorsAreCut() {
        long id = store.enqueue(task("a"), T0);
        store.claim(List.of(id), claim("w1", 11, T0));
        store.fail(11, List.of(Failure.permanent(id, "e".repeat(5000))), T0);
        assertThat(store.find(id).orElseThrow().lastError()).hasSize(Failure.MAX_ERROR_CHARS);
    }

    @Test
    void releaseGivesTheAttemptBack() {
        long id = store.enqueue(task("a"), T0);
        store.claim(List.of(id), claim("w1", 11, T0));
        assertThat(store.release(11, List.of(id), T0.plusSeconds(1))).isEqualTo(1);
        Task t = store.find(id).orElseThrow();
        assertThat(t.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(t.attempts()).isZero();
        assertThat(t.owner()).isNull();
        assertThat(store.findPending(GROUP, all(), T0.plusSeconds(1), 10)).hasSize(1);
    }

    @Test
    void countsPerRangeAndPerStatus() {
        List<String> keys = IntStream.range(0, 40).mapToObj(i -> "n" + i).toList();
        List<Long> ids =
                store.enqueueAll(keys.stream().map(TaskStoreContract::task).toList(), T0);
        long half = ConsistentHashRing.SLOT_COUNT / 2;
        SlotRange low = new SlotRange(0, half);
        SlotRange high = new SlotRange(half, ConsistentHashRing.SLOT_COUNT);
        long lowCount =
                keys.stream().filter(k -> ConsistentHashRing.slotOf(k) < half).count();
        assertThat(store.countPending(GROUP, List.of(low, high)))
                .containsExactly(Map.entry(low, lowCount), Map.entry(high, 40 - lowCount));
        assertThat(store.countPending("nobody", List.of(low))).containsExactly(Map.entry(low, 0L));
        assertThat(store.countPending(GROUP, List.of())).isEmpty();

        store.claim(ids.subList(0, 10), claim("w", 5, T0));
        store.complete(5, ids.subList(0, 4), T0);
        store.fail(5, List.of(Failure.permanent(ids.get(4), "x")), T0);
        assertThat(store.countByStatus(GROUP))
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        TaskStatus.PENDING, 30L, TaskStatus.RUNNING, 5L, TaskStatus.DONE, 4L, TaskStatus.FAILED, 1L));
    }

    @Test
    void purgeDeletesOnlyOldDoneTasks() {
        List<Long> ids = store.enqueueAll(
                IntStream.range(0, 5).mapToObj(i -> task("p" + i)).toList(), T0);
        store.claim(ids, claim("w", 5, T0));
        store.complete(5, ids.subList(0, 3), T0.plusSeconds(10));
        store.complete(5, ids.subList(3, 4), T0.plusSeconds(100));
        assertThat(store.purgeDone(GROUP, T0.plusSeconds(50), 2)).isEqualTo(2);
        assertThat(store.purgeDone(GROUP, T0.plusSeconds(50), 100)).isEqualTo(1);
        assertThat(store.purgeDone(GROUP, T0.plusSeconds(50), 100)).isZero();
        Set<TaskStatus> left = store.countByStatus(GROUP).keySet();
        assertThat(left).containsExactlyInAnyOrder(TaskStatus.DONE, TaskStatus.RUNNING);
        assertThat(store.find(ids.get(3))).isPresent();
    }
}
