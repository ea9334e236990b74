package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.ClientSequenceTracker.Gap;
import io.pidpool.client.internal.quota.ClientSequenceTracker.Source;
import io.pidpool.client.internal.quota.ClientSequenceTracker.Verdict;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.RefundResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The usage event log: every change exactly once, numbered without gaps, readable from an offset. */
class UsageEventLogIT {
    private static final QuotaMonth NOV = QuotaMonth.parse("2026-11");

    private final String cluster = RedisSupport.randomCluster();
    private final List<RedissonClient> clients = new ArrayList<>();
    private final List<RedissonQuotaLedger> ledgers = new ArrayList<>();

    @BeforeEach
    void connect() {
        for (int c = 0; c < 3; c++) {
            RedissonClient client = RedisSupport.client(RedisSupport.sharedUrl());
            clients.add(client);
            ledgers.add(RedisSupport.ledger(client, cluster, "client" + c).build());
        }
    }

    @AfterEach
    void drop() {
        RedisSupport.drop(clients.get(0), ledgers.get(0).keys());
        ledgers.forEach(RedissonQuotaLedger::close);
        clients.forEach(RedissonClient::shutdown);
    }

    private List<UsageEvent> readAll(UsageEventLog log) {
        List<UsageEvent> all = new ArrayList<>();
        for (int s = 0; s < log.keys().shards(); s++) {
            String after = UsageEventLog.START;
            while (true) {
                List<UsageEvent> page = log.read(s, after, 37);
                if (page.isEmpty()) {
                    break;
                }
                all.addAll(page);
                after = page.get(page.size() - 1).offset();
            }
        }
        return all;
    }

    @Test
    void everyChangeIsLoggedExactlyOnceAlsoUnderConcurrentRetriesAndNothingElseIs() throws Exception {
        List<String> pids = List.of("p0", "p1", "p2", "p3", "p4", "p5");
        pids.forEach(p -> ledgers.get(0).setLimit(p, 60));
        Set<String> granted = ConcurrentHashMap.newKeySet();
        Set<String> refunded = ConcurrentHashMap.newKeySet();
        // two threads per client walk the SAME deductions and refunds: every id is sent concurrently twice
        ExecutorService pool = Executors.newFixedThreadPool(6);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            RedissonQuotaLedger ledger = ledgers.get(c);
            int client = c;
            for (int twin = 0; twin < 2; twin++) {
                futures.add(pool.submit(() -> {
                    go.await();
                    SplittableRandom random = new SplittableRandom(client); // the twins draw the same ids
                    for (int i = 0; i < 120; i++) {
                        String pid = pids.get(random.nextInt(pids.size()));
                        String id = "c" + client + "-" + i;
                        long amount = 1 + random.nextInt(3);
                        DeductResult d = ledger.tryDeduct(pid, NOV, amount, id);
                        if (d.granted()) {
                            granted.add(pid + "|" + id + "|" + amount);
                            if (random.nextInt(3) == 0) {
                                RefundResult r = ledger.refund(pid, NOV, id, "r-" + id, 1);
                                assertThat(r.applied()).isTrue();
                                refunded.add(pid + "|r-" + id);
                            }
                        } else {
                            random.nextInt(3);
                        }
                    }
                    return null;
                }));
            }
        }
        go.countDown();
        for (Future<?> f : futures) {
            f.get(120, TimeUnit.SECONDS);
        }
        pool.shutdown();

        List<UsageEvent> events = readAll(ledgers.get(1).events());

        List<String> deductions = events.stream()
                .filter(e -> e.kind() == UsageEvent.Kind.DEDUCTION)
                .map(e -> e.pid() + "|" + e.deductionId() + "|" + e.amount())
                .toList();
        List<String> refunds = events.stream()
                .filter(e -> e.kind() == UsageEvent.Kind.REFUND)
                .map(e -> e.pid() + "|" + e.refundId())
                .toList();
        assertThat(deductions).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(granted);
        assertThat(refunds).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(refunded);
        assertThat(granted).hasSizeGreaterThan(100);
        // the log replays to the ledger: per PID, the last event's usage equals the sum of the changes
        for (String pid : pids) {
            long net = events.stream()
                    .filter(e -> e.pid().equals(pid))
                    .mapToLong(e -> e.kind() == UsageEvent.Kind.DEDUCTION ? e.amount() : -e.amount())
                    .sum();
            assertThat(ledgers.get(2).usage(pid, NOV).used())
                    .as(pid)
                    .isEqualTo(net)
                    .isLessThanOrEqualTo(60);
            events.stream().filter(e -> e.pid().equals(pid)).reduce((a, b) -> b).ifPresent(last -> assertThat(
                            last.usedAfter())
                    .isEqualTo(net));
        }
        // each client's numbers in each shard run 1..n without a gap or a repeat
        ClientSequenceTracker tracker = new ClientSequenceTracker();
        assertThat(events).allSatisfy(e -> assertThat(tracker.accept(e)).isEqualTo(Verdict.NEW));
        assertThat(tracker.gaps()).isEmpty();
        Map<Source, Long> counts = events.stream().collect(Collectors.groupingBy(Source::of, Collectors.counting()));
        counts.forEach((source, n) -> assertThat(tracker.contiguousUpTo(source)).isEqualTo(n));
        // one incarnation per shard (the first writer's candidate), the same for every client
        assertThat(events.stream()
                        .collect(Collectors.groupingBy(
                                UsageEvent::shard, Collectors.mapping(UsageEvent::incarnation, Collectors.toSet()))))
                .allSatisfy((shard, incarnations) -> assertThat(incarnations).hasSize(1));
    }

    @Test
    void rejectionsRetriesAndConflictsAppendNothingAndAResetIsLogged() {
        RedissonQuotaLedger ledger = ledgers.get(0);
        UsageEventLog log = ledger.events();
        ledger.setLimit("u1", 5);
        ledger.tryDeduct("u1", NOV, 4, "d1");
        ledger.refund("u1", NOV, "d1", "r1", 1);
        int shard = ledger.keys().shardOf("u1");
        assertThat(log.read(shard, UsageEventLog.START, 100)).hasSize(2);

        ledger.tryDeduct("u1", NOV, 4, "d1"); // retry
        ledger.tryDeduct("u1", NOV, 3, "d1"); // conflict
        ledger.tryDeduct("u1", NOV, 3, "d2"); // exhausted
        ledger.refund("u1", NOV, "d1", "r1", 1); // retry
        ledger.refund("u1", NOV, "d1", "r1", 2); // conflict
        ledger.refund("u1", NOV, "zz", "r2", 1); // unknown
        ledger.refund("u1", NOV, "d1", "r3", 9); // exceeds
        assertThat(log.read(shard, UsageEventLog.START, 100)).hasSize(2);

        ledger.reset("u1", NOV);

        List<UsageEvent> events = log.read(shard, UsageEventLog.START, 100);
        assertThat(events)
                .extracting(UsageEvent::kind)
                .containsExactly(UsageEvent.Kind.DEDUCTION, UsageEvent.Kind.REFUND, UsageEvent.Kind.RESET);
        UsageEvent first = events.get(0);
        assertThat(first)
                .extracting(
                        UsageEvent::pid,
                        UsageEvent::month,
                        UsageEvent::deductionId,
                        UsageEvent::amount,
                        UsageEvent::usedAfter,
                        UsageEvent::limit,
                        UsageEvent::clientId,
                        UsageEvent::sequence)
                .containsExactly("u1", NOV, "d1", 4L, 4L, 5L, "client0", 1L);
        assertThat(events.get(1).refundId()).isEqualTo("r1");
        assertThat(events.get(1).usedAfter()).isEqualTo(3);
        assertThat(events.get(2).sequence()).isEqualTo(3);
        assertThat(events.get(2).changeKey()).startsWith("X|u1|2026-11|");
        assertThat(first.appendedAt()).isBefore(java.time.Instant.now().plusSeconds(5));
    }

    @Test
    void consumersReadFromTheirOffsetAckForwardOnlyAndTrimKeepsWhatAnyoneStillNeeds() {
        RedissonQuotaLedger ledger = ledgers.get(0);
        UsageEventLog log = UsageEventLog.reader(clients.get(2), ledger.keys());
        ledger.setLimit("u1", 100);
        int shard = ledger.keys().shardOf("u1");
        for (int i = 0; i < 10; i++) {
            ledger.tryDeduct("u1", NOV, 1, "d" + i);
        }
        List<UsageEvent> all = log.read(shard, UsageEventLog.START, 100);
        assertThat(all).hasSize(10);
        assertThat(log.trim(shard)).as("no consumer registered: nothing goes").isZero();

        assertThat(log.read(shard, all.get(3).offset(), 4))
                .extracting(UsageEvent::deductionId)
                .containsExactly("d4", "d5", "d6", "d7");
        assertThat(log.committed(shard, "db")).isEqualTo(UsageEventLog.START);
        assertThat(log.ack(shard, "db", all.get(5).offset()))
                .isEqualTo(all.get(5).offset());
        assertThat(log.ack(shard, "db", all.get(2).offset()))
                .as("never backwards")
                .isEqualTo(all.get(5).offset());
        assertThat(log.ack(shard, "audit", all.get(1).offset()))
                .isEqualTo(all.get(1).offset());
        assertThat(log.committed(shard, "db")).isEqualTo(all.get(5).offset());

        assertThat(log.trim(shard)).as("audit has only d0, d1").isEqualTo(2);
        assertThat(log.read(shard, UsageEventLog.START, 100)).hasSize(8);
        log.ack(shard, "audit", all.get(9).offset());
        assertThat(log.trim(shard)).isEqualTo(4);
        assertThat(log.read(shard, UsageEventLog.START, 100))
                .extracting(UsageEvent::deductionId)
                .containsExactly("d6", "d7", "d8", "d9");
    }

    @Test
    void aConsumerThatMissedEventsFindsTheGapsAndFillsThemFromRedis() {
        RedissonQuotaLedger a = ledgers.get(0);
        RedissonQuotaLedger b = ledgers.get(1);
        a.setLimit("u1", 1000);
        int shard = a.keys().shardOf("u1");
        for (int i = 0; i < 40; i++) {
            (i % 3 == 0 ? b : a).tryDeduct("u1", NOV, 1, "d" + i);
        }
        UsageEventLog log = a.events();
        ClientSequenceTracker tracker = new ClientSequenceTracker();
        Map<String, UsageEvent> store = new HashMap<>();

        // a lossy consumer: it drops every 7th event it reads (a crash between read and write, a bug),
        // including the very last one, which no later sequence number would reveal
        UsageEventLog.Heads heads = log.heads(shard); // before reading: everything numbered is in the stream
        List<UsageEvent> read = log.read(shard, UsageEventLog.START, 1000);
        for (int i = 0; i < read.size(); i++) {
            if (i % 7 == 3 || i == read.size() - 1) {
                continue;
            }
            if (tracker.accept(read.get(i)) == Verdict.NEW) {
                store.put(read.get(i).changeKey(), read.get(i));
            }
        }
        List<Gap> withoutHeads = tracker.gaps();
        tracker.expectUpTo(heads);
        List<Gap> gaps = tracker.gaps();
        assertThat(gaps).hasSizeGreaterThan(withoutHeads.size());
        assertThat(heads.lastByClient()).containsOnlyKeys("client0", "client1");
        for (Gap gap : gaps) {
            for (UsageEvent e : log.findBySequence(
                    shard,
                    gap.source().incarnation(),
                    gap.source().clientId(),
                    gap.fromSeq(),
                    gap.toSeq(),
                    UsageEventLog.START)) {
                if (tracker.accept(e) == Verdict.NEW) {
                    store.put(e.changeKey(), e);
                }
            }
        }
        // and a duplicate delivery changes nothing
        read.forEach(e -> assertThat(tracker.accept(e)).isEqualTo(Verdict.DUPLICATE));

        assertThat(tracker.gaps()).isEmpty();
        assertThat(store).hasSize(40);
        assertThat(store.values().stream().mapToLong(UsageEvent::amount).sum())
                .isEqualTo(a.usage("u1", NOV).used());
    }
}
