package io.pidpool.client;

import static io.pidpool.client.testing.SdkHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.client.testing.BlackHoleProxy;
import io.pidpool.client.testing.FakePlatform;
import io.pidpool.client.testing.RecordingListener;
import io.pidpool.client.testing.SdkHarness;
import io.pidpool.client.testing.TestZooKeeper;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.redisson.api.RedissonClient;

/**
 * A Redis outage as a client sees it: the client reaches the shared Redis through a {@link
 * BlackHoleProxy}, which stalls every byte for {@code pidpool.outage.cutSeconds} (default 4 s) while a
 * thread keeps calling {@code tryAcquire(1)}. Required (docs/design.md §9, docs/outages.md): no call
 * waits longer than the acquire timeout (1 s by default); once the first call ran out of time, the
 * calls fail at once; permits resume within 1 s after Redis answers again, with no failure after the
 * first one; and once the deductions of unknown outcome are voided, usage equals the permits exactly.
 */
class PidClientRedisOutageIT {
    /** What a caller may wait beyond the 1 s deadline: a thread wake-up on a busy 2-core machine. */
    private static final Duration SLACK = Duration.ofMillis(250);

    private static final Duration CUT = Duration.ofSeconds(Long.getLong("pidpool.outage.cutSeconds", 4));

    private static TestingServer zookeeper;
    private static String redisUrl;

    private SdkHarness harness;
    private RedissonClient leaderRedis;
    private RedissonQuotaLedger leaderLedger;
    private BlackHoleProxy redisProxy;
    private final FakePlatform platform = new FakePlatform();

    /** One call: when it started and ended (ticker nanos) and how it came back. */
    private record Call(long start, long end, boolean permit, String error) {
        long millis() {
            return TimeUnit.NANOSECONDS.toMillis(end - start);
        }
    }

    @BeforeAll
    static void start() {
        zookeeper = TestZooKeeper.start();
        redisUrl = RedisSupport.sharedUrl();
    }

    @AfterAll
    static void stop() throws IOException {
        zookeeper.close();
    }

    @BeforeEach
    void setUp() {
        harness = new SdkHarness(zookeeper.getConnectString());
        leaderRedis = RedisSupport.client(redisUrl);
        leaderLedger = RedissonQuotaLedger.builder()
                .redisson(leaderRedis)
                .cluster(harness.cluster())
                .clientId("leader")
                .build();
        URI redis = URI.create(redisUrl);
        redisProxy = BlackHoleProxy.to(redis.getPort());
    }

    @AfterEach
    void tearDown() {
        redisProxy.close();
        harness.close();
        try {
            leaderLedger.close();
            RedisSupport.drop(leaderRedis, leaderLedger.keys());
        } finally {
            leaderRedis.shutdown();
        }
    }

    @ParameterizedTest(name = "batched={0}")
    @ValueSource(booleans = {false, true})
    void callersFailFastDuringARedisOutageAndPermitsResumeWithinASecond(boolean batched) throws Exception {
        RecordingListener listener = new RecordingListener("A", platform);
        PidClient client = harness.start(harness.builder(listener)
                .redisAddress("redis://127.0.0.1:" + redisProxy.port())
                .batchedPermits(batched));
        FakeLeaderSupport.assign(harness, client, leaderLedger, Map.of("p1", 10_000_000L));
        for (int i = 0; i < 200; i++) {
            assertThat(client.tryAcquire(1)).isPresent(); // warm: every pooled connection is in use once
        }

        ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();
        Outage outage = throughACut("outage-caller", () -> {
            Optional<Permit> p = client.tryAcquire(1);
            p.ifPresent(permits::add);
            return p.isPresent();
        });
        long cut = outage.cut();
        long heal = outage.heal();

        List<Call> all = outage.calls();
        long longest = outage.longest();
        assertThat(longest)
                .as("no caller waits longer than the acquire timeout (cut %d s)", CUT.toSeconds())
                .isLessThanOrEqualTo(1000 + SLACK.toMillis());
        Call firstFailure = outage.firstFailure("no call failed during the cut");
        // once the first call ran out of time, Redis is known to be away: the rest fail at once
        List<Call> whileKnownAway = outage.whileKnownAway(firstFailure);
        long slowestKnownAway =
                whileKnownAway.stream().mapToLong(Call::millis).max().orElse(0);
        Call firstPermitAfterHeal = outage.firstSuccessAfterHeal("no permit after Redis came back");
        long resumedMs = TimeUnit.NANOSECONDS.toMillis(firstPermitAfterHeal.end() - heal);
        List<Call> failedAfterResumption = all.stream()
                .filter(c -> c.error() != null && c.start() > firstPermitAfterHeal.end())
                .toList();
        long failedBetween = all.stream()
                .filter(c -> c.error() != null && c.end() > heal && c.end() <= firstPermitAfterHeal.end())
                .count();
        System.out.printf(
                "redis outage (batched=%s, cut %d s): longest call %d ms; first failure %d ms after the cut;"
                        + " %d calls while known away, slowest %d ms; first permit %d ms after the heal;"
                        + " %d calls failed between heal and resumption, %d after%n",
                batched,
                CUT.toSeconds(),
                longest,
                TimeUnit.NANOSECONDS.toMillis(firstFailure.end() - cut),
                whileKnownAway.size(),
                slowestKnownAway,
                resumedMs,
                failedBetween,
                failedAfterResumption.size());

        assertThat(whileKnownAway).as("calls while Redis is known to be away").hasSizeGreaterThan(10);
        assertThat(slowestKnownAway)
                .as("calls fail at once while Redis is known to be away")
                .isLessThan(100); // 0-13 ms measured; a thread wake-up on a loaded 2-core machine may add some
        assertThat(resumedMs)
                .as("permits resume within 1 s after Redis answers")
                .isLessThanOrEqualTo(1000);
        assertThat(failedAfterResumption).as("failures after permits resumed").isEmpty();

        // exactly once: what no permit was handed out for is voided, nothing more, nothing less
        long granted = permits.size() + 200;
        await("uncertain deductions voided")
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(leaderLedger
                                .usage("p1", new MonthlyWindow(ZoneOffset.UTC).monthOf(Instant.now()))
                                .used())
                        .isEqualTo(granted));
        assertThat(listener.violations()).isEmpty();
        assertThat(platform.violations()).isEmpty();
    }

    /**
     * Refunds under the same deadline and circuit as acquires: a thread refunds permits (1 command each,
     * refund id {@code r1}, cycling over 150 permits so a permit is refunded again and again) while
     * Redis is cut. No refund waits longer than the acquire timeout; once the first one ran out of time
     * the rest fail at once; refunds succeed again within 1 s after the heal; and the caller's retries
     * with the same refund ids leave usage exactly where the refunds say (each applied once).
     */
    @org.junit.jupiter.api.Test
    void refundsWaitAtMostTheDeadlineFailFastWhileRedisIsAwayAndStayIdempotent() throws Exception {
        RecordingListener listener = new RecordingListener("A", platform);
        PidClient client =
                harness.start(harness.builder(listener).redisAddress("redis://127.0.0.1:" + redisProxy.port()));
        FakeLeaderSupport.assign(harness, client, leaderLedger, Map.of("p1", 10_000_000L));
        List<Permit> permits = new java.util.ArrayList<>();
        for (int i = 0; i < 150; i++) {
            permits.add(client.tryAcquire(1).orElseThrow());
        }
        client.refund(permits.get(0).deductionId(), "r1", 1); // warm the lookup and refund scripts

        int[] next = {0};
        Outage outage = throughACut("outage-refunder", () -> {
            Permit p = permits.get(next[0]++ % permits.size());
            client.refund(p.deductionId(), "r1", 1);
            return true;
        });
        long cut = outage.cut();
        long heal = outage.heal();

        List<Call> all = outage.calls();
        long longest = outage.longest();
        assertThat(longest)
                .as("no refund waits longer than the acquire timeout (cut %d s)", CUT.toSeconds())
                .isLessThanOrEqualTo(1000 + SLACK.toMillis());
        Call firstFailure = outage.firstFailure("no refund failed during the cut");
        List<Call> whileKnownAway = outage.whileKnownAway(firstFailure);
        long slowestKnownAway =
                whileKnownAway.stream().mapToLong(Call::millis).max().orElse(0);
        Call firstAfterHeal = outage.firstSuccessAfterHeal("no refund succeeded after Redis came back");
        long resumedMs = TimeUnit.NANOSECONDS.toMillis(firstAfterHeal.end() - heal);
        long failedAfterResumption = all.stream()
                .filter(c -> c.error() != null && c.start() > firstAfterHeal.end())
                .count();
        System.out.printf(
                "redis outage, refunds (cut %d s): %d refunds, longest %d ms; first failure %d ms after the cut (%s);"
                        + " %d refunds while known away, slowest %d ms; first refund %d ms after the heal;"
                        + " %d failed after it%n",
                CUT.toSeconds(),
                all.size(),
                longest,
                TimeUnit.NANOSECONDS.toMillis(firstFailure.end() - cut),
                firstFailure.error(),
                whileKnownAway.size(),
                slowestKnownAway,
                resumedMs,
                failedAfterResumption);

        assertThat(whileKnownAway).as("refunds while Redis is known to be away").hasSizeGreaterThan(10);
        assertThat(slowestKnownAway)
                .as("refunds fail at once while Redis is known to be away")
                .isLessThan(100);
        assertThat(whileKnownAway)
                .allSatisfy(c -> assertThat(c.error()).contains("no refund sent; retry with the same refund id"));
        assertThat(resumedMs)
                .as("refunds resume within 1 s after Redis answers")
                .isLessThanOrEqualTo(1000);
        assertThat(failedAfterResumption)
                .as("refunds failed after they resumed")
                .isZero();

        // the caller retries every refund of unknown outcome with the same id: each is applied exactly once
        for (Permit p : permits) {
            client.refund(p.deductionId(), "r1", 1);
        }
        assertThat(leaderLedger
                        .usage("p1", new MonthlyWindow(ZoneOffset.UTC).monthOf(Instant.now()))
                        .used())
                .isZero();
        assertThat(listener.violations()).isEmpty();
        assertThat(platform.violations()).isEmpty();
    }

    /** One call of the thread that runs through the cut: true if it succeeded (a permit, a refund). */
    @FunctionalInterface
    private interface OneCall {
        boolean run();
    }

    /** The calls made through one cut, and when Redis was cut and healed (nanos). */
    private record Outage(List<Call> calls, long cut, long heal) {
        long longest() {
            return calls.stream().mapToLong(Call::millis).max().orElseThrow();
        }

        Call firstFailure(String none) {
            return calls.stream()
                    .filter(c -> c.error() != null)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(none));
        }

        /** The calls that started after {@code firstFailure} ended and ended before the heal. */
        List<Call> whileKnownAway(Call firstFailure) {
            return calls.stream()
                    .filter(c -> c.start() > firstFailure.end() && c.end() < heal)
                    .toList();
        }

        Call firstSuccessAfterHeal(String none) {
            return calls.stream()
                    .filter(c -> c.permit() && c.end() > heal)
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(none));
        }
    }

    /**
     * Runs {@code call} on a thread of its own every 2 ms: 300 ms before the cut, {@link #CUT} with
     * Redis black-holed, and 3 s after the heal. A call may fail only with {@code UNAVAILABLE}.
     */
    private Outage throughACut(String threadName, OneCall call) throws InterruptedException {
        ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread caller = new Thread(
                () -> {
                    while (running.get()) {
                        long start = System.nanoTime();
                        try {
                            boolean ok = call.run();
                            calls.add(new Call(start, System.nanoTime(), ok, null));
                        } catch (PidPoolException e) {
                            assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE);
                            calls.add(new Call(start, System.nanoTime(), false, e.getMessage()));
                        }
                        LockSupport.parkNanos(2_000_000);
                    }
                },
                threadName);
        caller.start();
        Thread.sleep(300);
        long cut = System.nanoTime();
        redisProxy.blackHole();
        Thread.sleep(CUT.toMillis());
        long heal = System.nanoTime();
        redisProxy.restore();
        Thread.sleep(3000);
        running.set(false);
        caller.join(30_000);
        assertThat(caller.isAlive()).as("the %s thread ended", threadName).isFalse();
        return new Outage(List.copyOf(calls), cut, heal);
    }

    /** The steps of {@code PidClientQuotaIT.assign}: limits as the leader sets them, then the hand-out. */
    private static final class FakeLeaderSupport {
        static void assign(SdkHarness harness, PidClient client, RedissonQuotaLedger ledger, Map<String, Long> limits) {
            var instance = harness.handshake(client);
            limits.forEach(ledger::setLimit);
            harness.addAndAwait(instance, limits.keySet().toArray(String[]::new));
            await().atMost(WAIT).until(() -> client.heldPids().equals(limits.keySet()));
        }
    }
}
