package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.quota.testing.QuotaScenario;
import io.pidpool.client.internal.quota.testing.QuotaScenario.Client;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Redis SIGKILLed and restarted (from its append-only file, fsynced on every write) while 4 clients x
 * 4 threads take permits: no permit handed out is missing from the ledger or the event log afterwards,
 * and once the deductions of unknown outcome are voided, usage equals the permits exactly.
 */
class PermitIssuerRestartIT {
    private static final Map<String, Long> QUOTAS =
            Map.of("p0", 150L, "p1", 150L, "p2", 150L, "p3", 150L, "p4", 150L, "p5", 150L);
    /** Workers stop at this many permits until Redis is killed (then they meet the outage). */
    private static final int PERMITS_BEFORE_CRASH = 80;

    private final QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).current(Clock.systemUTC());

    @Test
    void aRestartMidRunLosesNoGrantedPermit() throws Exception {
        try (RedisProcess redis = RedisProcess.start(true);
                QuotaScenario scenario = new QuotaScenario(redis.url())) {
            for (int c = 0; c < 4; c++) {
                boolean batched = c >= 2; // two clients of each mode
                scenario.addClient(QUOTAS.keySet(), b -> b, b -> (batched
                                ? b.batching(32).requestTimeout(Duration.ofSeconds(8))
                                : b)
                        .settleDelay(Duration.ofMillis(300)));
            }
            QUOTAS.forEach((pid, quota) -> scenario.client(0).ledger().setLimit(pid, quota));
            ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();
            AtomicInteger outageErrors = new AtomicInteger();
            AtomicBoolean restarted = new AtomicBoolean();
            AtomicBoolean killed = new AtomicBoolean();
            AtomicInteger permitsAfterRestart = new AtomicInteger();

            ExecutorService pool = Executors.newFixedThreadPool(16);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> workers = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                Client client = scenario.client(t / 4);
                int seed = t;
                workers.add(pool.submit(() -> {
                    go.await();
                    SplittableRandom random = new SplittableRandom(seed);
                    int empties = 0;
                    for (int i = 0; i < 3000 && empties < 10; i++) {
                        // enough permits before the crash: wait for it, so that quota is left for
                        // after the restart however fast the issuers are (a poll bounded by the kill)
                        while (!killed.get() && permits.size() >= PERMITS_BEFORE_CRASH) {
                            LockSupport.parkNanos(1_000_000);
                        }
                        try {
                            Optional<Permit> p = client.issuer().tryAcquire(1 + random.nextInt(3));
                            if (p.isPresent()) {
                                permits.add(p.get());
                                if (restarted.get()) {
                                    permitsAfterRestart.incrementAndGet();
                                }
                                empties = 0;
                            } else if (restarted.get()) {
                                empties++;
                            }
                        } catch (PidPoolException e) {
                            if (e.code() != ErrorCode.UNAVAILABLE) {
                                throw e;
                            }
                            outageErrors.incrementAndGet();
                            // while Redis is known to be away calls fail at once: pace them, so the
                            // loop's budget lasts until after the restart
                            LockSupport.parkNanos(5_000_000);
                        }
                    }
                    return null;
                }));
            }
            go.countDown();
            await("permits before the crash")
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> permits.size() >= PERMITS_BEFORE_CRASH);
            redis.kill();
            killed.set(true);
            // stay down until the clients have felt it (Redisson's own retries hide a short outage)
            await("clients see the outage").atMost(Duration.ofSeconds(60)).until(() -> outageErrors.get() >= 8);
            redis.restart();
            restarted.set(true);
            for (Future<?> f : workers) {
                f.get(180, TimeUnit.SECONDS);
            }
            pool.shutdown();

            // void what nobody got a permit for, then take what is left one by one
            await("uncertain deductions settled")
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .ignoreExceptionsInstanceOf(PidPoolException.class)
                    .until(() -> scenario.clients().stream()
                                    .mapToInt(c -> c.issuer().reconcile())
                                    .sum()
                            == 0);
            // through a fresh client: the others may still trust an observation from before a void
            // (a refund by another client is only seen after maxObservationAge, by design)
            Client drain = scenario.addClient(QUOTAS.keySet(), b -> b, b -> b.maxAttempts(QUOTAS.size()));
            for (int i = 0; i < 1000; i++) {
                Optional<Permit> p = drain.issuer().tryAcquire(1);
                if (p.isEmpty()) {
                    break;
                }
                permits.add(p.get());
            }

            assertThat(permitsAfterRestart.get())
                    .as("permits were granted after the restart")
                    .isPositive();
            assertThat(permits).allSatisfy(p -> assertThat(scenario.inLedger(p))
                    .as("deduction %s of a granted permit", p.deductionId())
                    .isTrue());
            List<UsageEvent> events = scenario.allEvents();
            Set<String> logged = events.stream()
                    .filter(e -> e.kind() == UsageEvent.Kind.DEDUCTION)
                    .map(UsageEvent::deductionId)
                    .collect(Collectors.toSet());
            assertThat(permits).allSatisfy(p -> assertThat(logged).contains(p.deductionId()));
            Map<String, Long> granted = permits.stream()
                    .collect(Collectors.groupingBy(Permit::pid, Collectors.summingLong(Permit::commands)));
            assertThat(granted).isEqualTo(QUOTAS);
            for (String pid : QUOTAS.keySet()) {
                long net = events.stream()
                        .filter(e -> e.pid().equals(pid))
                        .mapToLong(e -> e.kind() == UsageEvent.Kind.DEDUCTION ? e.amount() : -e.amount())
                        .sum();
                assertThat(scenario.client(0).ledger().usage(pid, month).used())
                        .as(pid)
                        .isEqualTo(net)
                        .isEqualTo(QUOTAS.get(pid));
            }
            // the sequence numbers survived the restart: no gaps, no repeats
            ClientSequenceTracker tracker = new ClientSequenceTracker();
            assertThat(events)
                    .allSatisfy(e -> assertThat(tracker.accept(e)).isEqualTo(ClientSequenceTracker.Verdict.NEW));
            assertThat(tracker.gaps()).isEmpty();
            System.out.printf(
                    "restart run: %d permits (%d after the restart), %d UNAVAILABLE answers, %d void refunds"
                            + " (%d uncertain deductions had happened)%n",
                    permits.size(),
                    permitsAfterRestart.get(),
                    outageErrors.get(),
                    events.stream()
                            .filter(e -> e.kind() == UsageEvent.Kind.REFUND)
                            .count(),
                    events.stream()
                            .filter(e -> e.kind() == UsageEvent.Kind.REFUND
                                    && e.refundId().startsWith(PermitIssuer.VOID_PREFIX))
                            .count());
        }
    }
}
