package io.pidpool.core.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.testing.ManualClock;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SnowflakeIdsTest {
    private static final long EPOCH = SnowflakeIds.DEFAULT_EPOCH.toEpochMilli();

    private final long[] now = {EPOCH + 1_000_000};

    /** A generator on the scripted clock that refuses at once instead of waiting for it. */
    private SnowflakeIds.Builder scripted() {
        return SnowflakeIds.builder().clockMillis(() -> now[0]).maxWait(Duration.ZERO);
    }

    @Test
    void theBitLayoutIsTimestampDatacenterWorkerSequence() {
        SnowflakeIds ids = scripted().datacenterId(3).workerId(17).build();

        long first = ids.nextId();
        long second = ids.nextId();

        assertThat(first).isEqualTo((1_000_000L << 22) | (3L << 17) | (17L << 12));
        assertThat(second).isEqualTo(first + 1);
        SnowflakeId parts = ids.decode(second);
        assertThat(parts.timestampMillis()).isEqualTo(now[0]);
        assertThat(parts.datacenterId()).isEqualTo(3);
        assertThat(parts.workerId()).isEqualTo(17);
        assertThat(parts.sequence()).isEqualTo(1);
    }

    @Test
    void aNewMillisecondRestartsTheSequence() {
        SnowflakeIds ids = scripted().workerId(1).build();
        ids.nextId();
        ids.nextId();
        now[0] += 1;

        SnowflakeId parts = ids.decode(ids.nextId());

        assertThat(parts.sequence()).isZero();
        assertThat(parts.timestampMillis()).isEqualTo(now[0]);
    }

    @Test
    void aFullMillisecondBorrowsTheNextOneInsteadOfSpinning() {
        SnowflakeIds ids = scripted().workerId(1).build();
        long last = 0;
        for (int i = 0; i <= SnowflakeIds.MAX_SEQUENCE; i++) {
            last = ids.nextId();
        }
        assertThat(ids.decode(last).sequence()).isEqualTo(SnowflakeIds.MAX_SEQUENCE);

        long borrowed = ids.nextId();

        assertThat(borrowed).isGreaterThan(last);
        assertThat(ids.decode(borrowed).timestampMillis()).isEqualTo(now[0] + 1);
        assertThat(ids.decode(borrowed).sequence()).isZero();
        assertThat(ids.lastTimestampMillis()).isEqualTo(now[0] + 1);
    }

    @Test
    void aSmallStepBackKeepsCountingOnTheLastTimestamp() {
        SnowflakeIds ids =
                scripted().workerId(1).maxLead(Duration.ofMillis(500)).build();
        long before = ids.nextId();
        long lastTimestamp = now[0];
        now[0] -= 400;

        long after = ids.nextId();

        assertThat(after).isGreaterThan(before);
        assertThat(ids.decode(after).timestampMillis()).isEqualTo(lastTimestamp);
        assertThat(ids.decode(after).sequence()).isEqualTo(1);
    }

    @Test
    void aLargeStepBackIsRefusedUntilTheClockCatchesUpAndChangesNothing() {
        SnowflakeIds ids =
                scripted().workerId(1).maxLead(Duration.ofMillis(500)).build();
        long before = ids.nextId();
        long lastTimestamp = ids.lastTimestampMillis();
        now[0] -= 10_000;

        assertThatThrownBy(ids::nextId)
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("clock is 10000 ms behind the last issued id")
                .satisfies(e -> {
                    PidPoolException p = (PidPoolException) e;
                    assertThat(p.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(p.code().retryable()).isTrue();
                    assertThat(p.field()).isEqualTo("clock");
                });
        assertThat(ids.lastTimestampMillis()).isEqualTo(lastTimestamp);

        now[0] += 9_500; // exactly maxLead behind: the last timestamp may be reused
        long after = ids.nextId();
        assertThat(after).isGreaterThan(before);
        assertThat(ids.decode(after).timestampMillis()).isEqualTo(lastTimestamp);
    }

    @Test
    void underOverloadACallWaitsForTheNextMillisecondInsteadOfRefusing() {
        // each look at the ticker lets the clock move on by a millisecond
        long[] nanos = {0};
        SnowflakeIds ids = SnowflakeIds.builder()
                .clockMillis(() -> now[0])
                .ticker(() -> {
                    now[0] += 1;
                    return nanos[0] += 1_000_000;
                })
                .maxLead(Duration.ZERO)
                .maxWait(Duration.ofMillis(100))
                .workerId(1)
                .build();
        long start = now[0];
        long previous = -1;

        for (int i = 0; i < 3 * 4096; i++) {
            long id = ids.nextId();
            assertThat(id).isGreaterThan(previous);
            assertThat(ids.decode(id).timestampMillis()).isLessThanOrEqualTo(now[0]);
            previous = id;
        }

        // three full milliseconds, two waits of one millisecond each
        assertThat(ids.decode(previous).timestampMillis()).isEqualTo(start + 2);
        assertThat(now[0]).isEqualTo(start + 2);
    }

    @Test
    void aStepBackShorterThanLeadPlusWaitIsRiddenOut() {
        long[] nanos = {0};
        SnowflakeIds ids = SnowflakeIds.builder()
                .clockMillis(() -> now[0])
                .ticker(() -> {
                    now[0] += 50;
                    return nanos[0] += 50_000_000;
                })
                .maxLead(Duration.ofMillis(20))
                .maxWait(Duration.ofSeconds(1))
                .workerId(1)
                .build();
        long before = ids.nextId();
        long lastTimestamp = now[0];
        now[0] -= 120;

        long after = ids.nextId();

        assertThat(after).isGreaterThan(before);
        assertThat(now[0]).isGreaterThanOrEqualTo(lastTimestamp - 20);
        assertThat(ids.decode(after).timestampMillis()).isEqualTo(lastTimestamp);
    }

    @Test
    void aStepBackLongerThanLeadPlusWaitIsRefusedAfterTheWait() {
        long[] nanos = {0};
        SnowflakeIds ids = SnowflakeIds.builder()
                .clockMillis(() -> now[0])
                .ticker(() -> nanos[0] += 200_000_000)
                .maxLead(Duration.ofMillis(20))
                .maxWait(Duration.ofMillis(100))
                .workerId(1)
                .build();
        ids.nextId();
        now[0] -= 10_000;

        assertThatThrownBy(ids::nextId)
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("clock is 10000 ms behind the last issued id (allowed lead 20 ms, waited 100 ms)")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }

    @Test
    void theReleaseDelayCoversTheBorrowedLead() {
        SnowflakeIds ids = scripted().workerId(1).build();
        assertThat(ids.releaseDelayMillis()).isZero();
        for (int i = 0; i < 3 * 4096; i++) {
            ids.nextId(); // two milliseconds borrowed
        }

        assertThat(ids.releaseDelayMillis()).isEqualTo(3);
        now[0] += 3;
        assertThat(ids.releaseDelayMillis()).isZero();
    }

    @Test
    void zeroLeadNeverIssuesAheadOfTheClock() {
        SnowflakeIds ids = scripted().workerId(1).maxLead(Duration.ZERO).build();
        for (int i = 0; i <= SnowflakeIds.MAX_SEQUENCE; i++) {
            ids.nextId();
        }

        assertThatThrownBy(ids::nextId).isInstanceOf(PidPoolException.class);
        now[0] += 1;
        assertThat(ids.decode(ids.nextId()).timestampMillis()).isEqualTo(now[0]);
    }

    @Test
    void issueAfterHandsOverFromAPredecessorWithTheSameWorkerId() {
        SnowflakeIds old = scripted().workerId(7).build();
        for (int i = 0; i < 5000; i++) {
            old.nextId(); // borrows one millisecond ahead of the clock
        }
        long oldLast = old.nextId();
        now[0] -= 1; // and the clock steps back a little as the successor starts

        SnowflakeIds successor =
                scripted().workerId(7).issueAfter(old.lastTimestampMillis()).build();
        long first = successor.nextId();

        assertThat(first).isGreaterThan(oldLast);
        assertThat(successor.decode(first).timestampMillis()).isEqualTo(old.lastTimestampMillis() + 1);
    }

    @Test
    void aClockBeforeTheEpochIsAnIllegalState() {
        now[0] = EPOCH - 1;
        SnowflakeIds ids = scripted().workerId(0).build();

        assertThatThrownBy(ids::nextId)
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("before the id epoch 2025-01-01T00:00:00Z")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }

    @Test
    void theEndOfTheTimestampSpaceIsAnIllegalState() {
        now[0] = EPOCH + SnowflakeIds.MAX_TIMESTAMP;
        SnowflakeIds ids = scripted().workerId(0).maxLead(Duration.ofMillis(10)).build();
        for (int i = 0; i <= SnowflakeIds.MAX_SEQUENCE; i++) {
            assertThat(ids.nextId()).isPositive();
        }

        assertThatThrownBy(ids::nextId).hasMessageContaining("timestamp space").isInstanceOf(PidPoolException.class);
    }

    @Test
    void aCustomEpochMovesTheTimestamp() {
        Instant epoch = Instant.parse("2026-01-01T00:00:00Z");
        ManualClock clock = ManualClock.at("2026-01-01T00:00:01Z");
        SnowflakeIds ids =
                SnowflakeIds.builder().epoch(epoch).clock(clock).workerId(2).build();

        long id = ids.nextId();

        assertThat(id >>> 22).isEqualTo(1000);
        assertThat(ids.decode(id).timestamp()).isEqualTo(clock.instant());
        assertThat(SnowflakeIds.decode(id, epoch.toEpochMilli()).workerId()).isEqualTo(2);
    }

    @Test
    void badSettingsAreRejectedWithTheirField() {
        record Case(Runnable action, String field) {}
        List<Case> cases = List.of(
                new Case(() -> SnowflakeIds.builder().workerId(32), "workerId"),
                new Case(() -> SnowflakeIds.builder().workerId(-1), "workerId"),
                new Case(() -> SnowflakeIds.builder().datacenterId(32), "datacenterId"),
                new Case(() -> SnowflakeIds.builder().build(), "workerId"),
                new Case(() -> SnowflakeIds.builder().maxLead(Duration.ofMillis(-1)), "maxLead"),
                new Case(() -> SnowflakeIds.builder().maxLead(Duration.ofHours(2)), "maxLead"),
                new Case(() -> SnowflakeIds.builder().maxWait(Duration.ofSeconds(11)), "maxWait"),
                new Case(() -> SnowflakeIds.builder().ticker(null), "ticker"),
                new Case(() -> SnowflakeIds.builder().clock(null), "clock"),
                new Case(() -> SnowflakeIds.builder().issueAfter(-2), "issueAfter"),
                new Case(() -> SnowflakeIds.decode(-5, 0), "id"));
        for (Case c : cases) {
            assertThatThrownBy(c.action()::run)
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo(c.field()));
        }
    }

    @Test
    void fourThreadsOnTheRealClockMake200kDistinctIncreasingIds() throws Exception {
        SnowflakeIds ids =
                SnowflakeIds.builder().clock(Clock.systemUTC()).workerId(5).build();
        assertDistinctAcrossThreads(ids, 4, 50_000);
    }

    @Test
    void fourThreadsOnAFrozenClockMake200kDistinctIdsByBorrowing() throws Exception {
        SnowflakeIds ids = scripted().workerId(5).maxLead(Duration.ofSeconds(1)).build();
        assertDistinctAcrossThreads(ids, 4, 50_000);
        // 200k ids need 49 milliseconds of 4096 ids each
        assertThat(ids.lastTimestampMillis() - now[0]).isEqualTo(200_000 / 4096);
    }

    private static void assertDistinctAcrossThreads(SnowflakeIds ids, int threads, int perThread) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<long[]>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                futures.add(pool.submit(() -> {
                    go.await();
                    long[] mine = new long[perThread];
                    for (int i = 0; i < perThread; i++) {
                        mine[i] = ids.nextId();
                    }
                    return mine;
                }));
            }
            go.countDown();
            long[] all = new long[threads * perThread];
            int at = 0;
            for (Future<long[]> f : futures) {
                long[] mine = f.get(60, TimeUnit.SECONDS);
                for (int i = 1; i < mine.length; i++) {
                    assertThat(mine[i]).as("ids of one thread increase").isGreaterThan(mine[i - 1]);
                }
                System.arraycopy(mine, 0, all, at, mine.length);
                at += mine.length;
            }
            Arrays.sort(all);
            for (int i = 1; i < all.length; i++) {
                if (all[i] == all[i - 1]) {
                    throw new AssertionError("duplicate id " + all[i]);
                }
            }
            assertThat(all[0]).isPositive();
        } finally {
            pool.shutdownNow();
        }
    }
}
