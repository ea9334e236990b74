package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pidpool.client.internal.quota.DeductRequest;
import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.UsageEvent;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.port.DeductionBalance;
import io.pidpool.core.port.Refund;
import io.pidpool.core.port.UsageLedger;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.redisson.api.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/** The usage sync against the shared Redis and a throw-away database (H2; PostgreSQL when configured). */
class UsageLedgerSyncIT {

    @Test
    void concurrentPermitsRefundsAndRetriesReachTheLedgerExactlyOnceH2() {
        exactlyOnce(false);
    }

    @Test
    void concurrentPermitsRefundsAndRetriesReachTheLedgerExactlyOncePostgres() {
        assumeTrue(UsageFixture.postgresConfigured(), "PIDPOOL_TEST_POSTGRES_URL not set");
        exactlyOnce(true);
    }

    private void exactlyOnce(boolean postgres) {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), postgres)) {
            List<String> pids = pids(f, 8);
            List<RedissonQuotaLedger> clients = List.of(f.quota, f.quotaClient("c2"), f.quotaClient("c3"));
            Workload load = new Workload(pids, f.month, "p");
            List<SyncReport> reports = syncWhile(f.sync(), () -> load.run(clients, 150, 42, () -> {}));

            assertRecordedExactlyOnce(f, load, reports);
            clients.stream().filter(c -> c != f.quota).forEach(RedissonQuotaLedger::close);
        }
    }

    /**
     * The ledger holds exactly the load's grants and refunds, each recorded once, by syncs that raised
     * nothing alert-worthy and compensated nothing from the stream.
     */
    private static void assertRecordedExactlyOnce(UsageFixture f, Workload load, List<SyncReport> reports) {
        assertLedgerMatches(f, load);
        assertThat(reports.stream().mapToInt(SyncReport::recorded).sum())
                .isEqualTo(load.grants.size() + load.refunds.size());
        assertThat(reports)
                .allSatisfy(r -> assertThat(r.alertWorthy()).as(r.toString()).isFalse());
        assertThat(reports.stream().mapToInt(SyncReport::compensatedFromStream).sum())
                .isZero();
    }

    /** Syncs in a loop on its own thread while {@code load} runs, then once more after it. */
    private static List<SyncReport> syncWhile(UsageLedgerSync sync, Runnable load) {
        AtomicBoolean stop = new AtomicBoolean();
        List<SyncReport> reports = new ArrayList<>();
        Thread syncer = new Thread(
                () -> {
                    while (!stop.get()) {
                        reports.addAll(sync.syncAll());
                    }
                },
                "sync");
        syncer.start();
        load.run();
        stop.set(true);
        join(syncer);
        reports.addAll(sync.syncAll());
        return reports;
    }

    @Test
    void batchedDeductionsReachTheLedgerExactlyOnceFromOneStreamEntryPerBatch() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            List<String> pids = pids(f, 6);
            List<RedissonQuotaLedger> clients = List.of(f.quota, f.quotaClient("c2"));
            // pages of 3 stream entries: a page holds many more events than that
            UsageLedgerSync sync =
                    new UsageLedgerSync(f.log, f.redisson, f.ledger, UsageFixture.CONSUMER, f.clock, 3, 20_000);
            Workload load = new Workload(pids, f.month, "b");
            List<SyncReport> reports = syncWhile(sync, () -> load.runBatched(clients, 40, 12, 11));

            assertRecordedExactlyOnce(f, load, reports);
            // fewer stream entries than deduction events: the batches were coalesced per shard
            long entries = 0;
            for (int s = 0; s < f.keys.shards(); s++) {
                entries += f.redisson
                        .getStream(f.keys.events(s), StringCodec.INSTANCE)
                        .size();
            }
            assertThat(entries).isLessThan(load.grants.size() + load.refunds.size());
            clients.stream().filter(c -> c != f.quota).forEach(RedissonQuotaLedger::close);
        }
    }

    @Test
    void aLostBatchEntryIsAGapOfItsWholeRangeRecoveredFromTheMonthRecords() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            String pid = pids(f, 1).get(0);
            int shard = f.keys.shardOf(pid);
            for (int b = 0; b < 3; b++) {
                List<DeductRequest> batch = new ArrayList<>();
                for (int i = 1; i <= 5; i++) {
                    batch.add(new DeductRequest(pid, f.month, i, "e" + b + "-" + i, true));
                }
                assertThat(f.quota.tryDeductAll(batch))
                        .allSatisfy(r -> assertThat(r.granted()).isTrue());
            }
            List<UsageEvent> events = f.log.read(shard, UsageEventLog.START, 1000);
            assertThat(events)
                    .extracting(UsageEvent::sequence)
                    .containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L);
            // one stream entry per batch: three offsets, five events each
            assertThat(events.stream().map(UsageEvent::offset).distinct()).hasSize(3);
            String[] id = events.get(5).offset().split("-");
            f.redisson
                    .<String, String>getStream(f.keys.events(shard), StringCodec.INSTANCE)
                    .remove(new StreamMessageId(Long.parseLong(id[0]), Long.parseLong(id[1])));

            SyncReport report = f.sync().syncShard(shard);
            assertThat(report.eventsRead()).isEqualTo(10);
            assertThat(report.streamGaps()).isEqualTo(1);
            assertThat(report.alerts())
                    .extracting(GapAlert::fromSeq, GapAlert::toSeq)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(6L, 10L));
            assertThat(report.recoveredFromRecords()).isEqualTo(5);
            assertThat(f.ledger.netUsage(pid, f.month.value()))
                    .isEqualTo(45)
                    .isEqualTo(f.quota.usage(pid, f.month).used());
            SyncReport next = f.sync().syncShard(shard);
            assertThat(next.recorded()).isZero();
            assertThat(next.recoveredFromRecords()).isZero();
        }
    }

    @Test
    void aConsumerKilledBetweenCommitAndAckReplaysWithoutDuplicates() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            List<String> pids = pids(f, 1);
            Workload load = new Workload(pids, f.month, "k");
            load.run(List.of(f.quota), 120, 7, () -> {});
            int shard = f.keys.shardOf(pids.get(0));

            UsageLedgerSync first = f.sync();
            first.beforeAck = s -> {
                throw new IllegalStateException("killed after the commit, before the ack");
            };
            assertThatThrownBy(() -> first.syncShard(shard)).hasMessageContaining("killed");
            assertThat(f.log.committed(shard, UsageFixture.CONSUMER)).isEqualTo(UsageEventLog.START);

            SyncReport replay = f.sync().syncShard(shard); // the restarted consumer
            assertThat(replay.duplicates()).isEqualTo(50); // the page committed before the "crash"
            assertThat(replay.recorded() + replay.duplicates()).isEqualTo(replay.eventsRead());
            assertThat(replay.recorded() + replay.duplicates()).isEqualTo(load.grants.size() + load.refunds.size());
            assertThat(replay.alerts()).isEmpty();
            assertLedgerMatches(f, load);
            SyncReport again = f.sync().syncShard(shard);
            assertThat(again.eventsRead()).isZero();
        }
    }

    @Test
    void eventsSkippedByTheReaderAreFoundAgainByTheirSequenceNumbers() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            List<String> pids = pids(f, 1);
            Workload load = new Workload(pids, f.month, "s");
            load.run(List.of(f.quota), 30, 3, () -> {});
            int shard = f.keys.shardOf(pids.get(0));
            List<UsageEvent> events = f.log.read(shard, UsageEventLog.START, 1000);
            // an offset acknowledged past 10 events that never reached the database (a bug, a restored backup)
            f.log.ack(shard, UsageFixture.CONSUMER, events.get(9).offset());

            SyncReport report = f.sync().syncShard(shard);
            assertThat(report.eventsRead()).isEqualTo(events.size() - 10);
            assertThat(report.compensatedFromStream()).isEqualTo(10);
            assertThat(report.alerts()).isEmpty();
            assertThat(report.recoveredFromRecords()).isZero();
            assertLedgerMatches(f, load);
        }
    }

    @Test
    void anEventLostFromTheStreamIsAGapCompensatedFromTheMonthRecords() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            String pid = pids(f, 1).get(0);
            int shard = f.keys.shardOf(pid);
            for (int i = 1; i <= 10; i++) {
                assertThat(f.quota.tryDeduct(pid, f.month, i, "d" + i).granted())
                        .isTrue();
            }
            f.quota.refund(pid, f.month, "d3", "r3", 2);
            f.quota.refund(pid, f.month, "d4", "r4", 1); // seq 12: the last event
            List<UsageEvent> events = f.log.read(shard, UsageEventLog.START, 1000);
            assertThat(events).hasSize(12);
            // lose: deduction d5 (seq 5), deduction d3 (seq 3, whose refund r3 is still there), and the
            // last event (refund r4, seq 12), which no later number would reveal, only the head does
            var stream = f.redisson.<String, String>getStream(f.keys.events(shard), StringCodec.INSTANCE);
            for (int lost : new int[] {2, 4, 11}) {
                String[] id = events.get(lost).offset().split("-");
                stream.remove(new StreamMessageId(Long.parseLong(id[0]), Long.parseLong(id[1])));
            }

            SyncReport report = f.sync().syncShard(shard);
            String db = LedgerClientIds.forSource(shard, report.incarnation(), "c1");
            assertThat(report.eventsRead()).isEqualTo(9);
            assertThat(report.streamGaps()).isEqualTo(2); // 3 and 5 skipped in the read; 12 only the heads reveal
            assertThat(report.alerts())
                    .extracting(GapAlert::fromSeq, GapAlert::toSeq)
                    .containsExactlyInAnyOrder(
                            org.assertj.core.groups.Tuple.tuple(3L, 3L),
                            org.assertj.core.groups.Tuple.tuple(5L, 5L),
                            org.assertj.core.groups.Tuple.tuple(12L, 12L));
            assertThat(report.alerts())
                    .allSatisfy(a -> assertThat(a.dbClientId()).isEqualTo(db));
            // d3 when its refund arrived; d5 and r4 from the month hash
            assertThat(report.recoveredFromRecords()).isEqualTo(3);
            assertThat(f.ledger.findDeduction("d5").map(DeductionBalance::net)).contains(5L);
            assertThat(f.ledger.findDeduction("d3").map(DeductionBalance::net)).contains(1L);
            assertThat(f.ledger.refundsOf("d4")).extracting(Refund::amount).containsExactly(1L);
            assertThat(f.ledger.netUsage(pid, f.month.value()))
                    .isEqualTo(55 - 3)
                    .isEqualTo(f.quota.usage(pid, f.month).used());

            // the next pass neither alerts again nor records anything twice
            SyncReport next = f.sync().syncShard(shard);
            assertThat(next.recorded()).isZero();
            assertThat(next.recoveredFromRecords()).isZero();
            assertThat(f.ledger.netUsage(pid, f.month.value())).isEqualTo(52);
        }
    }

    @Test
    void oneRefundIdOnTwoPidsAndTwoDeductionsReachesTheLedgerAndTheFiguresAgree() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            List<String> pids = pids(f, 2);
            String a = pids.get(0);
            String b = pids.get(1);
            assertThat(f.quota.tryDeduct(a, f.month, 10, "ra-1").granted()).isTrue();
            assertThat(f.quota.tryDeduct(a, f.month, 4, "ra-2").granted()).isTrue();
            assertThat(f.quota.tryDeduct(b, f.month, 10, "rb-1").granted()).isTrue();
            // "r0" is the first refund of each permit: one refund id, three deductions, two PIDs
            assertThat(f.quota.refund(a, f.month, "ra-1", "r0", 1).applied()).isTrue();
            assertThat(f.quota.refund(b, f.month, "rb-1", "r0", 1).applied()).isTrue();
            assertThat(f.quota.refund(a, f.month, "ra-2", "r0", 2).applied()).isTrue();
            // a retry is still a duplicate, and another amount under the same id is still refused
            assertThat(f.quota.refund(a, f.month, "ra-1", "r0", 1))
                    .isInstanceOf(io.pidpool.core.quota.RefundResult.RefundDuplicate.class);
            assertThat(f.quota.refund(a, f.month, "ra-1", "r0", 3))
                    .isInstanceOfSatisfying(
                            io.pidpool.core.quota.RefundResult.RefundRejected.class, r -> assertThat(r.reason())
                                    .isEqualTo(io.pidpool.core.quota.RefundResult.Reason.REFUND_ID_CONFLICT));

            List<SyncReport> reports = f.sync().syncAll();

            assertThat(reports)
                    .allSatisfy(r -> assertThat(r.orphans()).as(r.toString()).isEmpty());
            assertThat(f.ledger.refundsOf("rb-1")).extracting(Refund::id).containsExactly("r0");
            assertThat(f.ledger.refundsOf("ra-2")).extracting(Refund::id).containsExactly("r0");
            Map<String, Long> ledger = f.ledger.netUsageByPid(f.month.value());
            assertThat(ledger).isEqualTo(Map.of(a, 11L, b, 9L));
            assertThat(f.redisUsed(ledger.keySet())).isEqualTo(ledger);
        }
    }

    @Test
    void aRefusedEventRaisesAnAlertAndTheLedgerCatchesUpFromRedis() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            String pid = pids(f, 1).get(0);
            int shard = f.keys.shardOf(pid);
            f.quota.tryDeduct(pid, f.month, 10, "q1");
            f.quota.refund(pid, f.month, "q1", "r0", 4);
            // the ledger refuses the refund's event once (as the old global refund-id key did)
            AtomicBoolean refused = new AtomicBoolean();
            UsageLedger refusingOnce = refusing(f.ledger, r -> refused.compareAndSet(false, true));
            List<Alert> alerts = new ArrayList<>();
            var store = new io.pidpool.worker.task.InMemoryTaskStore();
            UsageSyncService service = new UsageSyncService(
                    f.redisson, f.keys, refusingOnce, store, "usage", f.clock, Duration.ofSeconds(1), alerts::add);

            runTaskOf(service, store, shard);

            assertThat(refused).isTrue();
            assertThat(f.ledger.refundsOf("q1")).extracting(Refund::id).containsExactly("r0");
            assertThat(f.ledger.netUsage(pid, f.month.value()))
                    .isEqualTo(6)
                    .isEqualTo(f.quota.usage(pid, f.month).used());
            assertThat(alerts).singleElement().satisfies(a -> {
                assertThat(a.key()).isEqualTo("USAGE_LEDGER:shard-" + shard);
                assertThat(a.kind()).isEqualTo(AlertKind.USAGE_LEDGER);
                assertThat(a.severity()).isEqualTo(Severity.WARNING);
                assertThat(a.message()).contains("r0").contains("agrees with it again");
            });
            service.close();
        }
    }

    @Test
    void aDeductionIdReusedOnAnotherPidIsDriftTheLedgerCannotTakeAndRaisesACriticalAlert() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            List<String> pids = pids(f, 2);
            // Redis keeps deductions per PID and month, the ledger by id: ids must be unique per cluster
            f.quota.tryDeduct(pids.get(0), f.month, 5, "same");
            f.quota.tryDeduct(pids.get(1), f.month, 3, "same");
            List<Alert> alerts = new ArrayList<>();
            var store = new io.pidpool.worker.task.InMemoryTaskStore();
            UsageSyncService service = new UsageSyncService(
                    f.redisson, f.keys, f.ledger, store, "usage", f.clock, Duration.ofSeconds(1), alerts::add);

            runTaskOf(service, store, f.keys.shardOf(pids.get(0)));
            if (f.keys.shardOf(pids.get(1)) != f.keys.shardOf(pids.get(0))) {
                runTaskOf(service, store, f.keys.shardOf(pids.get(1)));
            }

            assertThat(alerts).singleElement().satisfies(a -> {
                assertThat(a.severity()).isEqualTo(Severity.CRITICAL);
                assertThat(a.message()).contains("still differs").contains("same");
            });
            service.close();
        }
    }

    /** Runs the pending sync task of {@code shard} through the service's handler. */
    private static void runTaskOf(UsageSyncService service, io.pidpool.worker.task.InMemoryTaskStore store, int shard) {
        service.tasks().ensurePending();
        var task = store.all().stream()
                .filter(t -> t.body().equals(Integer.toString(shard)))
                .findFirst()
                .orElseThrow();
        try {
            service.handlers().get(UsageSyncTasks.TYPE).handle(task);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** {@code ledger}, but refunds for which {@code refuse} answers true are refused as conflicts. */
    private static UsageLedger refusing(UsageLedger ledger, java.util.function.Predicate<Refund> refuse) {
        return (UsageLedger) java.lang.reflect.Proxy.newProxyInstance(
                UsageLedger.class.getClassLoader(), new Class<?>[] {UsageLedger.class}, (proxy, method, args) -> {
                    if (method.getName().equals("recordRefund") && refuse.test((Refund) args[0])) {
                        throw io.pidpool.core.error.PidPoolException.conflict(
                                "refundId", "refund %s was recorded with other content", ((Refund) args[0]).id());
                    }
                    try {
                        return method.invoke(ledger, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void aLostEventWhoseMonthRecordIsGoneToIsReportedAndNotInvented() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            String pid = pids(f, 1).get(0);
            int shard = f.keys.shardOf(pid);
            for (int i = 1; i <= 3; i++) {
                f.quota.tryDeduct(pid, f.month, 1, "g" + i);
            }
            List<UsageEvent> events = f.log.read(shard, UsageEventLog.START, 10);
            String[] id = events.get(1).offset().split("-");
            f.redisson
                    .<String, String>getStream(f.keys.events(shard), StringCodec.INSTANCE)
                    .remove(new StreamMessageId(Long.parseLong(id[0]), Long.parseLong(id[1])));
            f.redisson.getMap(f.keys.usage(pid, f.month), StringCodec.INSTANCE).fastRemove("d:g2");

            SyncReport report = f.sync().syncShard(shard);
            assertThat(report.alerts()).extracting(GapAlert::fromSeq).containsExactly(2L);
            assertThat(report.recoveredFromRecords()).isZero();
            assertThat(f.ledger.findDeduction("g2")).isEmpty();
            assertThat(f.ledger.netUsage(pid, f.month.value())).isEqualTo(2);
        }
    }

    @Test
    void theSchedulerKeepsOnePendingTaskPerShardAndTheHandlerSyncsTheShardItNames() {
        try (UsageFixture f = new UsageFixture(RedisSupport.sharedUrl(), false)) {
            String pid = pids(f, 1).get(0);
            f.quota.tryDeduct(pid, f.month, 2, "t1");
            var store = new io.pidpool.worker.task.InMemoryTaskStore();
            List<SyncReport> reports = new ArrayList<>();
            UsageSyncTasks tasks = new UsageSyncTasks(f.sync(), store, "usage", f.clock, reports::add);
            assertThat(tasks.ensurePending()).isEqualTo(f.keys.shards());
            assertThat(tasks.ensurePending()).isZero();
            assertThat(store.all())
                    .extracting(io.pidpool.worker.task.Task::key)
                    .doesNotHaveDuplicates()
                    .allSatisfy(k -> assertThat(k).startsWith("usage-sync:" + f.cluster + ":"));
            int shard = f.keys.shardOf(pid);
            var task = store.all().stream()
                    .filter(t -> t.body().equals(Integer.toString(shard)))
                    .findFirst()
                    .orElseThrow();
            tasks.handler().handle(task);
            assertThat(reports).singleElement().satisfies(r -> {
                assertThat(r.shard()).isEqualTo(shard);
                assertThat(r.recorded()).isEqualTo(1);
            });
            assertThat(f.ledger.netUsage(pid, f.month.value())).isEqualTo(2);
            var bad = new io.pidpool.worker.task.Task(
                    1, "usage", 0, UsageSyncTasks.TYPE, "k", "99", task.status(), 1, 3, 0, 0, null, 0, null, 0, 0);
            assertThatThrownBy(() -> tasks.handler().handle(bad))
                    .isInstanceOf(io.pidpool.worker.task.NonRetryableTaskException.class);
        }
    }

    static List<String> pids(UsageFixture f, int n) {
        List<String> pids = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String pid = "pid-" + i;
            f.quota.setLimit(pid, 1_000_000);
            pids.add(pid);
        }
        return pids;
    }

    /** Every answered grant and refund is in the database once, and database, Redis and the load agree. */
    static void assertLedgerMatches(UsageFixture f, Workload load) {
        load.grants.forEach((id, g) -> assertThat(f.ledger.findDeduction(id))
                .as("deduction %s", id)
                .hasValueSatisfying(d -> assertThat(d.deduction().amount()).isEqualTo(g.amount())));
        load.refunds.forEach((rid, r) -> assertThat(f.ledger.refundsOf(r.deductionId()))
                .as("refund %s", rid)
                .extracting(Refund::id, Refund::amount)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(rid, r.amount())));
        Map<String, Long> expected = load.expectedNet();
        assertThat(f.ledger.netUsageByPid(f.month.value())).isEqualTo(expected);
        assertThat(f.redisUsed(expected.keySet())).isEqualTo(expected);
    }

    static void join(Thread t) {
        try {
            t.join(120_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
    }
}
