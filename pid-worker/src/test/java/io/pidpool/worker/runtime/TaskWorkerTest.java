package io.pidpool.worker.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import io.pidpool.core.testing.ManualClock;
import io.pidpool.core.testing.ManualTicker;
import io.pidpool.worker.ring.GroupRing;
import io.pidpool.worker.ring.StaticRingMembership;
import io.pidpool.worker.task.Claim;
import io.pidpool.worker.task.InMemoryTaskStore;
import io.pidpool.worker.task.NewTask;
import io.pidpool.worker.task.NonRetryableTaskException;
import io.pidpool.worker.task.Task;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskStatus;
import io.pidpool.worker.task.TypedRanges;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The worker engine against the in-memory store, a hand-set ring and manual time. */
class TaskWorkerTest {
    private static final String GROUP = "g";

    private final ManualClock clock = ManualClock.at("2025-01-01T00:00:00Z");
    private final ManualTicker ticker = new ManualTicker();
    private final InMemoryTaskStore store = new InMemoryTaskStore();
    private final CountingWorkerMetrics metrics = new CountingWorkerMetrics();
    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
    private final List<TaskWorker> workers = new ArrayList<>();

    private WorkerConfig config = WorkerConfig.builder()
            .batchSize(10)
            .concurrency(4)
            .retryBackoff(Duration.ofSeconds(1))
            .lease(Duration.ofSeconds(30))
            .handlerTimeout(Duration.ofSeconds(10))
            .build();

    @AfterEach
    void closeWorkers() {
        workers.forEach(TaskWorker::close);
    }

    private TaskWorker worker(String member, StaticRingMembership ring, TaskHandler handler) {
        return worker(member, ring, Map.of("t", handler), store);
    }

    private TaskWorker worker(
            String member,
            StaticRingMembership ring,
            Map<String, TaskHandler> handlers,
            io.pidpool.worker.task.TaskStore s) {
        HandlerRunner runner = new HandlerRunner(member, handlers, config.concurrency(), config.handlerTimeout());
        TaskWorker w =
                new TaskWorker(GROUP, member, config, s, ring, runner, clock, ticker, metrics, new SplittableRandom(7));
        workers.add(w);
        return w;
    }

    private TaskHandler counting() {
        return t -> runs.computeIfAbsent(t.id(), id -> new AtomicInteger()).incrementAndGet();
    }

    private List<Long> enqueue(int n, String prefix) {
        return store.enqueueAll(
                IntStream.range(0, n)
                        .mapToObj(i -> NewTask.of(GROUP, "t", prefix + i, "{}"))
                        .toList(),
                clock.instant());
    }

    private static int drain(TaskWorker w) {
        int total = 0;
        for (int i = 0; i < 1000; i++) {
            int n = w.runOnce();
            if (n == 0) {
                return total;
            }
            total += n;
        }
        throw new AssertionError("worker did not run dry");
    }

    private Task task(long id) {
        return store.find(id).orElseThrow();
    }

    @Test
    void runsTheDueTasksOfItsOwnRangesOnly() {
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("w1", "w2"), 64);
        TaskWorker w1 = worker("w1", new StaticRingMembership("w1", ring), counting());
        List<Long> ids = enqueue(200, "k");

        int ran = drain(w1);

        long mine = ids.stream()
                .filter(id -> ring.ownerOf(task(id).slot()).orElseThrow().equals("w1"))
                .count();
        assertThat(mine).isBetween(40L, 160L);
        assertThat(ran).isEqualTo((int) mine);
        for (long id : ids) {
            boolean owned = ring.ownerOf(task(id).slot()).orElseThrow().equals("w1");
            assertThat(task(id).status()).isEqualTo(owned ? TaskStatus.DONE : TaskStatus.PENDING);
            assertThat(runs.containsKey(id)).isEqualTo(owned);
        }
        assertThat(runs.values()).allMatch(c -> c.get() == 1);
        assertThat(metrics.done()).isEqualTo(mine);
        assertThat(w1.ownedRanges()).containsExactly(TypedRanges.of(Set.of("t"), ring.rangesOf("w1")));
    }

    @Test
    void aRingChangeMovesTheWorkOnTheNextCycle() {
        StaticRingMembership view = new StaticRingMembership("w1", ConsistentHashRing.of(List.of("w1", "w2"), 16));
        TaskWorker w1 = worker("w1", view, counting());
        List<Long> ids = enqueue(100, "k");
        drain(w1);
        assertThat(store.countByStatus(GROUP).get(TaskStatus.PENDING)).isPositive();

        view.set(ConsistentHashRing.of(List.of("w1"), 16)); // w2 died: its ranges go to w1
        ticker.advance(config.pollInterval());
        drain(w1);
        assertThat(ids).allMatch(id -> task(id).status() == TaskStatus.DONE);
        assertThat(w1.ownedRanges()).containsExactly(TypedRanges.of(Set.of("t"), List.of(SlotRange.all())));
    }

    @Test
    void afterARingChangeTheNewRangesAreClaimedBeforeTheBacklogIsCounted() {
        List<String> calls = new ArrayList<>();
        InMemoryTaskStore recording = new InMemoryTaskStore() {
            @Override
            public synchronized List<Task> findPending(
                    String group, List<TypedRanges> selection, Instant now, int limit) {
                calls.add("find "
                        + selection.stream().mapToInt(t -> t.ranges().size()).sum());
                return super.findPending(group, selection, now, limit);
            }

            @Override
            public synchronized Map<SlotRange, Long> countPending(String group, TypedRanges selection) {
                calls.add("count " + selection.ranges().size());
                return super.countPending(group, selection);
            }
        };
        StaticRingMembership view = new StaticRingMembership("w1", ConsistentHashRing.of(List.of("w1", "w2"), 16));
        TaskWorker w1 = worker("w1", view, Map.of("t", counting()), recording);
        recording.enqueueAll(
                IntStream.range(0, 100)
                        .mapToObj(i -> NewTask.of(GROUP, "t", "k" + i, "{}"))
                        .toList(),
                clock.instant());
        w1.maintain();
        w1.runOnce();
        ticker.advance(config.backlogInterval());
        w1.maintain(); // the periodic count
        calls.clear();

        view.set(ConsistentHashRing.of(List.of("w1"), 16)); // w2 died
        w1.maintain(); // the pool's loop runs maintenance first
        w1.runOnce();
        assertThat(calls).as("the first store calls after the ring change").startsWith("find 1");
        assertThat(calls).noneMatch(c -> c.startsWith("count"));

        ticker.advance(config.pollInterval()); // the new ranges are counted one poll interval later
        w1.maintain();
        assertThat(calls).contains("count 1");
        assertThat(w1.lastBacklog()).containsOnlyKeys(SlotRange.all());
    }

    @Test
    void failuresRetryWithExponentialBackoffAndEndFailedWithTheError() {
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), t -> {
            throw new IllegalStateException("downstream said no");
        });
        long id = store.enqueue(NewTask.of(GROUP, "t", "k", "{}").withMaxAttempts(3), clock.instant());

        assertThat(w.runOnce()).isEqualTo(1);
        Task t = task(id);
        assertThat(t.status()).isEqualTo(TaskStatus.PENDING);
        assertThat(t.attempts()).isEqualTo(1);
        assertThat(t.nextAttemptAtMs()).isEqualTo(clock.instant().plusSeconds(1).toEpochMilli());
        assertThat(t.lastError()).isEqualTo("java.lang.IllegalStateException: downstream said no");

        ticker.advance(config.pollInterval());
        assertThat(w.runOnce()).as("not due before the backoff").isZero();
        clock.advance(Duration.ofSeconds(1));
        ticker.advance(config.pollInterval());
        assertThat(w.runOnce()).isEqualTo(1);
        assertThat(task(id).nextAttemptAtMs())
                .isEqualTo(clock.instant().plusSeconds(2).toEpochMilli());

        clock.advance(Duration.ofSeconds(2));
        ticker.advance(config.pollInterval());
        assertThat(w.runOnce()).isEqualTo(1);
        t = task(id);
        assertThat(t.status()).isEqualTo(TaskStatus.FAILED);
        assertThat(t.attempts()).isEqualTo(3);
        assertThat(t.lastError()).contains("downstream said no");
        assertThat(metrics.retried()).isEqualTo(2);
        assertThat(metrics.failed()).isEqualTo(1);
    }

    @Test
    void aNonRetryableFailureEndsFailedAtOnce() {
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), t -> {
            throw new NonRetryableTaskException("malformed body");
        });
        long id = store.enqueue(NewTask.of(GROUP, "t", "k", "{}"), clock.instant());
        w.runOnce();
        assertThat(task(id).status()).isEqualTo(TaskStatus.FAILED);
        assertThat(task(id).attempts()).isEqualTo(1);
        assertThat(task(id).lastError()).contains("malformed body");
    }

    @Test
    void aTaskOfATypeWithoutAHandlerIsNeverClaimedAndIsReportedAsUnhandled() {
        // the ring says w1 runs every type (a ring set by hand), but w1 has no handler for "unknown"
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), counting());
        long id =
                store.enqueue(new NewTask(GROUP, "unknown", "k", "{}", 1, java.util.Optional.empty()), clock.instant());
        w.maintain();
        assertThat(w.runOnce()).isZero();
        ticker.advance(config.pollInterval());
        assertThat(w.runOnce()).isZero();
        assertThat(task(id).status()).isEqualTo(TaskStatus.PENDING);
        assertThat(task(id).attempts()).isZero();
        assertThat(task(id).lastError()).isNull();
    }

    /** w1 runs a and b, w2 runs a only; their points are those of a two-member ring of 16 vnodes. */
    private static GroupRing typed(Map<String, Set<String>> typesByMember) {
        Map<String, GroupRing.Member> members = new HashMap<>();
        typesByMember.forEach((m, ts) -> members.put(m, new GroupRing.Member(16, ts)));
        return GroupRing.of(members);
    }

    private List<Long> enqueueTyped(String type, int n) {
        return store.enqueueAll(
                IntStream.range(0, n)
                        .mapToObj(i -> NewTask.of(GROUP, type, type + "-" + i, "{}"))
                        .toList(),
                clock.instant());
    }

    @Test
    void eachTypeIsRunByTheOwnerOfItsSlotInTheRingOfTheMembersThatRunIt() {
        GroupRing ring = typed(Map.of("w1", Set.of("a", "b"), "w2", Set.of("a")));
        Map<Long, String> ranBy = new ConcurrentHashMap<>();
        TaskHandler w1Handler = t -> ranBy.put(t.id(), "w1");
        TaskHandler w2Handler = t -> ranBy.put(t.id(), "w2");
        TaskWorker w1 =
                worker("w1", new StaticRingMembership("w1", ring), Map.of("a", w1Handler, "b", w1Handler), store);
        TaskWorker w2 = worker("w2", new StaticRingMembership("w2", ring), Map.of("a", w2Handler), store);
        List<Long> as = enqueueTyped("a", 100);
        List<Long> bs = enqueueTyped("b", 100);
        long c = store.enqueue(NewTask.of(GROUP, "c", "c-0", "{}"), clock.instant());

        drain(w2);
        drain(w1);

        assertThat(bs)
                .as("every b task on w1, the only member with a b handler")
                .allMatch(id -> "w1".equals(ranBy.get(id)));
        for (long id : as) {
            assertThat(ranBy.get(id))
                    .isEqualTo(ring.ownerOf("a", task(id).slot()).orElseThrow());
        }
        assertThat(as.stream().map(ranBy::get).distinct()).containsExactlyInAnyOrder("w1", "w2");
        assertThat(store.countByStatus(GROUP))
                .containsExactlyInAnyOrderEntriesOf(Map.of(TaskStatus.DONE, 200L, TaskStatus.PENDING, 1L));
        assertThat(task(c).attempts()).as("no member runs c: nobody claims it").isZero();
        assertThat(metrics.failed() + metrics.retried()).isZero();
        assertThat(w1.ownedRanges())
                .containsExactly(
                        TypedRanges.of(Set.of("a"), ring.ringOf("a").rangesOf("w1")),
                        TypedRanges.of(Set.of("b"), List.of(SlotRange.all())));

        // the reporter (w1, the smallest id) counts the task nobody runs; w2 reports nothing
        ticker.advance(config.backlogInterval());
        w2.maintain();
        assertThat(w2.lastUnhandled()).isEmpty();
        w1.maintain();
        assertThat(w1.lastUnhandled()).containsExactly(Map.entry("c", 1L));
        assertThat(metrics.lastUnhandled()).containsExactly(Map.entry("c", 1L));
    }

    @Test
    void whenTheLastMemberOfATypeLeavesItsTasksWaitPendingUntilOneJoins() {
        GroupRing both = typed(Map.of("w1", Set.of("a", "b"), "w2", Set.of("a")));
        StaticRingMembership view = new StaticRingMembership("w2", both);
        TaskWorker w2 = worker("w2", view, Map.of("a", counting()), store);
        view.set(typed(Map.of("w2", Set.of("a")))); // w1, the only b member, died
        List<Long> as = enqueueTyped("a", 50);
        List<Long> bs = enqueueTyped("b", 50);

        drain(w2);
        assertThat(as).allMatch(id -> task(id).status() == TaskStatus.DONE);
        assertThat(bs).allMatch(id -> task(id).status() == TaskStatus.PENDING && task(id).attempts() == 0);
        ticker.advance(config.backlogInterval());
        w2.maintain();
        assertThat(w2.lastUnhandled()).containsExactly(Map.entry("b", 50L));

        // w3 with a b handler joins: it takes every b task, w2 keeps its a share
        GroupRing joined = typed(Map.of("w2", Set.of("a"), "w3", Set.of("b")));
        view.set(joined);
        TaskWorker w3 = worker("w3", new StaticRingMembership("w3", joined), Map.of("b", counting()), store);
        assertThat(drain(w3)).isEqualTo(50);
        assertThat(bs).allMatch(id -> task(id).status() == TaskStatus.DONE && task(id).attempts() == 1);
        w2.runOnce(); // sees the new ring
        ticker.advance(config.backlogInterval());
        w2.maintain();
        assertThat(w2.lastUnhandled()).isEmpty();
        assertThat(metrics.lastUnhandled()).isEmpty();
    }

    @Test
    void anEmptyChunkIsSkippedForOnePollInterval() {
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), counting());
        assertThat(w.runOnce()).isZero();
        enqueue(1, "late");
        assertThat(w.runOnce()).as("the empty range is not asked again at once").isZero();
        ticker.advance(config.pollInterval().minusMillis(1));
        assertThat(w.runOnce()).isZero();
        ticker.advance(Duration.ofMillis(1));
        assertThat(w.runOnce()).isEqualTo(1);
    }

    @Test
    void busyRangesDoNotStarveOthers() {
        config = config.toBuilder().rangesPerQuery(1).batchSize(5).build();
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("w1", "w2"), 4);
        List<SlotRange> ranges = ring.rangesOf("w1");
        assertThat(ranges.size()).isGreaterThan(1);
        TaskWorker w = worker("w1", new StaticRingMembership("w1", ring), counting());
        enqueue(300, "k");
        Map<SlotRange, Integer> firstCycles = new HashMap<>();
        for (int cycle = 0; cycle < ranges.size(); cycle++) {
            w.runOnce();
        }
        for (long id : runs.keySet()) {
            SlotRange r = ranges.stream()
                    .filter(x -> x.contains(task(id).slot()))
                    .findFirst()
                    .orElseThrow();
            firstCycles.merge(r, 1, Integer::sum);
        }
        // one cycle per range: each range had its turn although each holds more than one batch
        assertThat(firstCycles).hasSize(ranges.size());
    }

    @Test
    void claimConflictsAreCountedAndTheLoserRunsNothing() {
        // another worker claims every other row between our fetch and our claim
        InMemoryTaskStore racing = new InMemoryTaskStore() {
            @Override
            public synchronized List<Task> findPending(
                    String group, List<TypedRanges> selection, Instant now, int limit) {
                List<Task> found = super.findPending(group, selection, now, limit);
                List<Long> stolen =
                        found.stream().map(Task::id).filter(id -> id % 2 == 0).toList();
                super.claim(stolen, new Claim("thief", 99, now, now.plusSeconds(30)));
                return found;
            }
        };
        racing.enqueueAll(
                IntStream.range(0, 10)
                        .mapToObj(i -> NewTask.of(GROUP, "t", "k" + i, "{}"))
                        .toList(),
                clock.instant());
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), Map.of("t", counting()), racing);
        assertThat(w.runOnce()).isEqualTo(5);
        assertThat(metrics.claimConflicts()).isEqualTo(5);
        assertThat(runs.keySet()).allMatch(id -> id % 2 == 1);
        assertThat(racing.all()).filteredOn(t -> t.id() % 2 == 0).allMatch(t -> t.owner()
                .equals("thief"));
    }

    @Test
    void anOutcomeTheStoreRefusedIsWrittenLaterWithoutRunningTheTaskAgain() {
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), t -> {
            runs.computeIfAbsent(t.id(), id -> new AtomicInteger()).incrementAndGet();
            store.setAvailable(false); // the database goes away while the handler runs
        });
        long id = store.enqueue(NewTask.of(GROUP, "t", "k", "{}"), clock.instant());
        assertThatThrownBy(w::runOnce).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(w::runOnce).as("still down: settling again fails").isInstanceOf(PidPoolException.class);
        assertThat(w.hasUnsettled()).isTrue();

        store.setAvailable(true);
        assertThat(w.runOnce()).isZero();
        assertThat(w.hasUnsettled()).isFalse();
        assertThat(task(id).status()).isEqualTo(TaskStatus.DONE);
        assertThat(runs.get(id).get()).isEqualTo(1);
        assertThat(metrics.done()).isEqualTo(1);
        assertThat(metrics.storeErrors()).isEqualTo(2);
    }

    @Test
    void expiredLeasesOfACrashedWorkerAreReapedAndRunAgain() {
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), counting());
        long id = store.enqueue(NewTask.of(GROUP, "t", "k", "{}"), clock.instant());
        store.claim(
                List.of(id),
                new Claim("crashed", 5, clock.instant(), clock.instant().plusSeconds(30)));

        w.maintain();
        assertThat(w.runOnce()).isZero();
        clock.advance(Duration.ofSeconds(31));
        ticker.advance(config.reapInterval());
        w.maintain();
        assertThat(metrics.reapedReturned()).isEqualTo(1);
        ticker.advance(config.pollInterval());
        assertThat(w.runOnce()).isEqualTo(1);
        assertThat(task(id).status()).isEqualTo(TaskStatus.DONE);
        assertThat(task(id).attempts()).isEqualTo(2);
    }

    @Test
    void maintenanceCountsTheBacklogPerRangeAndPurgesOldDoneTasks() {
        config = config.toBuilder().doneRetention(Duration.ofDays(1)).build();
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("w1", "w2"), 8);
        TaskWorker w = worker("w1", new StaticRingMembership("w1", ring), counting());
        List<Long> ids = enqueue(50, "b");
        w.runOnce(); // learns its ranges
        w.maintain();
        assertThat(w.lastBacklog()).as("claims come first after a ring change").isEmpty();
        ticker.advance(config.pollInterval());
        w.maintain();
        long mine = ids.stream()
                .filter(id -> ring.ownerOf(task(id).slot()).orElseThrow().equals("w1"))
                .count();
        assertThat(w.lastBacklog().keySet()).containsExactlyInAnyOrderElementsOf(ring.rangesOf("w1"));
        assertThat(w.lastBacklog().values().stream().mapToLong(Long::longValue).sum())
                .isEqualTo(mine - Math.min(mine, 10));
        assertThat(metrics.lastBacklog()).isEqualTo(w.lastBacklog());

        drain(w);
        clock.advance(Duration.ofDays(2));
        ticker.advance(config.purgeInterval());
        w.maintain();
        assertThat(store.countByStatus(GROUP)).doesNotContainKey(TaskStatus.DONE);
    }

    @Test
    void tasksThatCouldNotStartEarlyEnoughInTheLeaseAreReleased() {
        config = config.toBuilder().concurrency(1).batchSize(4).build();
        // lease 30 s, handler timeout 10 s: the last start is 17 s after the claim
        assertThat(config.latestStartAfterClaim()).isEqualTo(Duration.ofSeconds(17));
        TaskWorker w = worker("w1", StaticRingMembership.alone("w1"), t -> {
            runs.computeIfAbsent(t.id(), id -> new AtomicInteger()).incrementAndGet();
            ticker.advance(Duration.ofSeconds(9)); // a slow handler
        });
        List<Long> ids = enqueue(4, "l");
        assertThat(w.runOnce()).isEqualTo(4);
        // started at 0 s and 9 s; at 18 s the third may no longer start
        assertThat(runs).hasSize(2);
        assertThat(ids.stream().map(this::task).filter(t -> t.status() == TaskStatus.PENDING))
                .hasSize(2)
                .allMatch(t -> t.attempts() == 0);
    }

    @Test
    void onStopTasksNotYetStartedAreReleasedWithTheirAttemptGivenBack() {
        config = config.toBuilder().concurrency(1).batchSize(5).build();
        TaskWorker[] self = new TaskWorker[1];
        self[0] = worker("w1", StaticRingMembership.alone("w1"), t -> {
            runs.computeIfAbsent(t.id(), id -> new AtomicInteger()).incrementAndGet();
            self[0].stop();
        });
        List<Long> ids = enqueue(5, "s");
        assertThat(self[0].runOnce()).isEqualTo(5);
        assertThat(runs).hasSize(1);
        long started = runs.keySet().iterator().next();
        assertThat(task(started).status()).isEqualTo(TaskStatus.DONE);
        for (long id : ids) {
            if (id != started) {
                assertThat(task(id).status()).isEqualTo(TaskStatus.PENDING);
                assertThat(task(id).attempts()).isZero();
            }
        }
    }
}
