package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.Permit;
import io.pidpool.client.internal.quota.testing.QuotaScenario;
import io.pidpool.client.internal.quota.testing.QuotaScenario.Client;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import io.pidpool.core.quota.RefundResult.RefundApplied;
import io.pidpool.core.quota.RefundResult.RefundDuplicate;
import io.pidpool.core.quota.RefundResult.RefundRejected;
import java.time.Clock;
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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Permits from 4 clients (4 Redisson clients) x 4 threads against small quotas. The clients' holds
 * overlap on purpose (real holds are exclusive): that makes every PID contended by every client, which
 * is the hardest case for the ledger's exactness.
 */
class PermitIssuerIT {
    private static final Map<String, Long> QUOTAS = Map.of("p0", 17L, "p1", 40L, "p2", 23L, "p3", 61L, "p4", 9L);
    private static final int CLIENTS = 4;
    private static final int THREADS = 4;

    private final QuotaScenario scenario = new QuotaScenario(RedisSupport.sharedUrl());
    private final QuotaMonth month = new MonthlyWindow(ZoneOffset.UTC).current(Clock.systemUTC());

    @AfterEach
    void close() {
        scenario.close();
    }

    private void startClients(boolean batched) {
        for (int c = 0; c < CLIENTS; c++) {
            scenario.addClient(QUOTAS.keySet(), b -> b, b -> batched ? b.batching(64) : b);
        }
        QUOTAS.forEach((pid, quota) -> scenario.client(0).ledger().setLimit(pid, quota));
    }

    private <T> List<T> hammer(ThreadBody<T> body) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS * THREADS);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                for (int t = 0; t < THREADS; t++) {
                    Client client = scenario.client(c);
                    int thread = c * THREADS + t;
                    futures.add(pool.submit(() -> {
                        go.await();
                        return body.run(client, thread);
                    }));
                }
            }
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(120, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface ThreadBody<T> {
        T run(Client client, int thread) throws Exception;
    }

    @ParameterizedTest(name = "batched={0}")
    @ValueSource(booleans = {false, true})
    void grantedPermitsAddUpToTheQuotasExactlyAndAreAllInTheLog(boolean batched) throws Exception {
        startClients(batched);
        ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();

        hammer((client, thread) -> {
            SplittableRandom random = new SplittableRandom(thread);
            int empties = 0;
            for (int i = 0; i < 300 && empties < 8; i++) {
                Optional<Permit> p = client.issuer().tryAcquire(1 + random.nextInt(3));
                p.ifPresent(permits::add);
                empties = p.isPresent() ? 0 : empties + 1;
            }
            return null;
        });
        // what is left is smaller than some asks: take it one command at a time
        for (int i = 0; i < 500; i++) {
            Optional<Permit> p = scenario.client(i % CLIENTS).issuer().tryAcquire(1);
            if (p.isEmpty()) {
                break;
            }
            permits.add(p.get());
        }

        Map<String, Long> granted =
                permits.stream().collect(Collectors.groupingBy(Permit::pid, Collectors.summingLong(Permit::commands)));
        assertThat(granted).isEqualTo(QUOTAS);
        assertThat(permits).extracting(Permit::deductionId).doesNotHaveDuplicates();
        assertThat(permits).allSatisfy(p -> assertThat(p.month()).isEqualTo(month.value()));
        QUOTAS.forEach((pid, quota) ->
                assertThat(scenario.client(1).ledger().usage(pid, month).used()).isEqualTo(quota));
        for (Client c : scenario.clients()) {
            assertThat(c.issuer().tryAcquire(1)).isEmpty();
            assertThat(c.issuer().uncertainCount()).isZero();
        }
        // the log holds exactly the permits: each once, nothing else
        List<UsageEvent> events = scenario.allEvents();
        assertThat(events).allSatisfy(e -> assertThat(e.kind()).isEqualTo(UsageEvent.Kind.DEDUCTION));
        assertThat(events.stream().map(e -> e.pid() + "|" + e.deductionId() + "|" + e.amount()))
                .containsExactlyInAnyOrderElementsOf(permits.stream()
                        .map(p -> p.pid() + "|" + p.deductionId() + "|" + p.commands())
                        .toList());
    }

    @Test
    void asyncAcquiresWithManyInFlightPerThreadAlsoAddUpToTheQuotasExactly() throws Exception {
        startClients(true);
        ConcurrentLinkedQueue<Permit> permits = new ConcurrentLinkedQueue<>();

        hammer((client, thread) -> {
            SplittableRandom random = new SplittableRandom(thread);
            for (int round = 0; round < 30; round++) {
                List<java.util.concurrent.CompletableFuture<Optional<Permit>>> window = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    window.add(client.issuer().tryAcquireAsync(1 + random.nextInt(3)));
                }
                for (var f : window) {
                    f.get(60, TimeUnit.SECONDS).ifPresent(permits::add);
                }
            }
            return null;
        });
        for (int i = 0; i < 500; i++) {
            Optional<Permit> p =
                    scenario.client(i % CLIENTS).issuer().tryAcquireAsync(1).get(60, TimeUnit.SECONDS);
            if (p.isEmpty()) {
                break;
            }
            permits.add(p.get());
        }

        Map<String, Long> granted =
                permits.stream().collect(Collectors.groupingBy(Permit::pid, Collectors.summingLong(Permit::commands)));
        assertThat(granted).isEqualTo(QUOTAS);
        assertThat(permits).extracting(Permit::deductionId).doesNotHaveDuplicates();
        List<UsageEvent> events = scenario.allEvents();
        assertThat(events.stream().map(e -> e.pid() + "|" + e.deductionId() + "|" + e.amount()))
                .containsExactlyInAnyOrderElementsOf(permits.stream()
                        .map(p -> p.pid() + "|" + p.deductionId() + "|" + p.commands())
                        .toList());
        for (Client c : scenario.clients()) {
            assertThat(c.issuer().uncertainCount()).isZero();
        }
    }

    @Test
    void concurrentRepeatedRefundsFromEveryClientNeverExceedTheDeduction() throws Exception {
        startClients(false);
        List<Permit> permits = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            permits.add(scenario.client(i % CLIENTS).issuer().tryAcquire(3).orElseThrow());
        }
        // every thread refunds every permit by id alone, 1 command under each of r0..r3, twice over:
        // 4 x 1 offered against 3 deducted, each refund id sent 32 times from 4 clients
        List<List<RefundResult>> results = hammer((client, thread) -> {
            List<RefundResult> mine = new ArrayList<>();
            for (int round = 0; round < 2; round++) {
                for (Permit p : permits) {
                    for (int r = 0; r < 4; r++) {
                        String refundId = "r" + ((r + thread) % 4) + "-" + p.deductionId(); // unique per PID-month
                        mine.add(client.issuer().refund(p.deductionId(), refundId, 1));
                    }
                }
            }
            return mine;
        });

        List<RefundResult> all = results.stream().flatMap(List::stream).toList();
        Map<String, List<RefundApplied>> applied = all.stream()
                .filter(r -> r instanceof RefundApplied)
                .map(r -> (RefundApplied) r)
                .collect(Collectors.groupingBy(RefundApplied::deductionId));
        assertThat(applied).hasSize(permits.size());
        applied.forEach((id, list) -> {
            assertThat(list).hasSize(3).extracting(RefundApplied::refundId).doesNotHaveDuplicates();
            assertThat(list).extracting(RefundApplied::refundedTotal).containsExactlyInAnyOrder(1L, 2L, 3L);
        });
        // a duplicate answers with the original, wherever it came from
        assertThat(all.stream().filter(r -> r instanceof RefundDuplicate).map(r -> ((RefundDuplicate) r).original()))
                .allSatisfy(original ->
                        assertThat(applied.get(original.deductionId())).contains(original));
        assertThat(all.stream()
                        .filter(r -> r instanceof RefundRejected)
                        .map(r -> ((RefundRejected) r).reason())
                        .distinct())
                .containsExactly(RefundResult.Reason.EXCEEDS_DEDUCTION);
        for (Permit p : permits) {
            assertThat(scenario.client(2).ledger().usage(p.pid(), month).used()).isZero();
        }
        assertThat(scenario.allEvents())
                .filteredOn(e -> e.kind() == UsageEvent.Kind.REFUND)
                .hasSize(3 * permits.size());
    }

    @Test
    void noPermitWithoutALeaseOrForAPidNotHeldAndAHoldLostInFlightIsVoided() {
        Client c = scenario.addClient(Set.of("p0"));
        c.ledger().setLimit("p0", 10);
        c.ledger().setLimit("p1", 10);

        c.hold().lease(false);
        assertThat(c.issuer().tryAcquire(1)).isEmpty();
        c.hold().lease(true).hold(Set.of());
        assertThat(c.issuer().tryAcquire(1)).isEmpty();
        assertThat(scenario.allEvents()).isEmpty();

        c.hold().hold(Set.of("p0"));
        Permit p = c.issuer().tryAcquire(2).orElseThrow();
        assertThat(p.pid()).isEqualTo("p0");
        assertThat(p.deductionId()).startsWith(month.key().replace("-", "") + "-");
        assertThat(c.ledger().usage("p1", month).used()).isZero();

        // the lease answers true before the deduction and false after it: the grant must be voided
        AtomicInteger calls = new AtomicInteger();
        c.hold().lease(() -> calls.incrementAndGet() <= 2);
        assertThat(c.issuer().tryAcquire(3)).isEmpty();
        assertThat(c.ledger().usage("p0", month).used()).isEqualTo(2);
        List<UsageEvent> events = scenario.allEvents();
        assertThat(events)
                .extracting(UsageEvent::kind)
                .containsExactly(UsageEvent.Kind.DEDUCTION, UsageEvent.Kind.DEDUCTION, UsageEvent.Kind.REFUND);
        assertThat(events.get(2).refundId())
                .isEqualTo(PermitIssuer.VOID_PREFIX + events.get(1).deductionId());
    }

    @Test
    void refundsByIdWorkFromAnyClientAndBadIdsAreRejected() {
        Client a = scenario.addClient(Set.of("acct@example.com"));
        Client b = scenario.addClient(Set.of());
        a.ledger().setLimit("acct@example.com", 5);
        Permit p = a.issuer().tryAcquire(4).orElseThrow();

        RefundResult r = b.issuer().refund(p.deductionId(), "r1", 3);

        assertThat(r).isEqualTo(new RefundApplied("acct@example.com", month, p.deductionId(), "r1", 3, 3, 4, 1));
        assertThat(a.issuer().refund(p, "r1", 3)).isEqualTo(new RefundDuplicate((RefundApplied) r));
        assertThat(((RefundRejected) a.issuer().refund(p, "r2", 2)).reason())
                .isEqualTo(RefundResult.Reason.EXCEEDS_DEDUCTION);
        String unknown = DeductionIds.encode(month, 0, 12345);
        assertThatThrownBy(() -> b.issuer().refund(unknown, "r1", 1))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.NOT_FOUND));
        assertThatThrownBy(() -> b.issuer().refund("d1", "r1", 1))
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("deductionId");
        assertThatThrownBy(() -> b.issuer().refund(p.deductionId(), PermitIssuer.VOID_PREFIX + "x", 1))
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("refundId");
        assertThatThrownBy(() -> a.issuer().tryAcquire(0))
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("amount");
        assertThat(a.ledger().usage("acct@example.com", month).used()).isEqualTo(1);
    }
}
