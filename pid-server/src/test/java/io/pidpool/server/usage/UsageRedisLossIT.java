package io.pidpool.server.usage;

import static io.pidpool.server.usage.UsageLedgerSyncIT.assertLedgerMatches;
import static io.pidpool.server.usage.UsageLedgerSyncIT.pids;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.worker.ring.StaticRingMembership;
import io.pidpool.worker.runtime.WorkerConfig;
import io.pidpool.worker.runtime.WorkerPool;
import io.pidpool.worker.task.JdbiTaskStore;
import io.pidpool.worker.task.TaskSchema;
import io.pidpool.worker.task.TaskStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The sync as pid-worker tasks (two workers sharing the shards through a ring, a scheduler topping
 * up one task per shard) while permits are taken on a Redis of the test's own that is first
 * SIGKILLed and restarted (append-only file, fsync always) and later flushed.
 */
class UsageRedisLossIT {

    @Test
    void noGrantedPermitIsMissingAcrossARedisRestartAndAFlushAndCountersAreRebuilt() {
        try (RedisProcess redis = RedisProcess.start(true);
                UsageFixture f = new UsageFixture(redis.url(), false)) {
            List<String> pids = pids(f, 6);
            UsageLedgerSync sync = f.sync();
            List<SyncReport> reports = Collections.synchronizedList(new ArrayList<>());
            TaskSchema.migrate(f.database.dataSource());
            TaskStore store = JdbiTaskStore.create(f.database.dataSource());
            UsageSyncTasks tasks = new UsageSyncTasks(sync, store, "usage", f.clock, reports::add);
            ConsistentHashRing ring = ConsistentHashRing.of(List.of("w1", "w2"), 64);
            WorkerConfig config = WorkerConfig.builder()
                    .pollInterval(Duration.ofMillis(50))
                    .retryBackoff(Duration.ofMillis(100))
                    .maxRetryBackoff(Duration.ofMillis(500))
                    .lease(Duration.ofSeconds(20))
                    .handlerTimeout(Duration.ofSeconds(10))
                    .concurrency(2)
                    .build();
            List<WorkerPool> workers = new ArrayList<>();
            for (String id : List.of("w1", "w2")) {
                workers.add(WorkerPool.builder()
                        .cluster("usage-it")
                        .group("usage")
                        .taskStore(store)
                        .membership(new StaticRingMembership(id, ring))
                        .handler(UsageSyncTasks.TYPE, tasks.handler())
                        .config(config)
                        .build()
                        .start());
            }
            ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
            scheduler.scheduleWithFixedDelay(
                    () -> {
                        try {
                            tasks.ensurePending();
                        } catch (RuntimeException e) {
                            // the next tick tries again
                        }
                    },
                    0,
                    50,
                    TimeUnit.MILLISECONDS);
            List<RedissonQuotaLedger> clients = List.of(f.quota, f.quotaClient("c2"), f.quotaClient("c3"));
            try {
                // phase A: SIGKILL + restart in the middle of the load
                String runId = runId(redis);
                Workload a = new Workload(pids, f.month, "a");
                a.run(clients, 120, 11, redis::restart);
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertLedgerMatches(f, a));
                assertThat(runId(redis)).as("a new redis-server process").isNotEqualTo(runId);

                // phase B: everything synced, then Redis loses everything
                RedisProcess.command(redis.port(), "FLUSHALL");
                pids(f, 6); // the leader provisions the limits again
                Workload b = new Workload(pids, f.month, "b");
                UsageRebuilder rebuilder = new UsageRebuilder(f.redisson, sync, f.ledger, f.clock);
                b.run(clients, 120, 12, () -> rebuilder.rebuild(f.month)); // rebuilt under load
                Map<String, Long> expected = new TreeMap<>(a.expectedNet());
                b.expectedNet().forEach((pid, n) -> expected.merge(pid, n, Long::sum));
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                    assertThat(f.ledger.netUsageByPid(f.month.value())).isEqualTo(expected);
                    b.grants.keySet().forEach(id -> assertThat(f.ledger.findDeduction(id))
                            .isPresent());
                });
                a.grants.forEach((id, g) -> assertThat(f.ledger
                                .findDeduction(id)
                                .orElseThrow()
                                .deduction()
                                .amount())
                        .isEqualTo(g.amount()));
                // Redis counters: rebuilt once under load; equal to the ledger and to granted - refunded
                assertThat(f.redisUsed(expected.keySet())).isEqualTo(expected);
                UsageRebuilder.Report again = rebuilder.rebuild(f.month);
                assertThat(again.changed()).isZero();
                assertThat(again.usedAfter()).isEqualTo(expected);

                List<SyncReport> seen;
                synchronized (reports) {
                    seen = List.copyOf(reports);
                }
                assertThat(seen)
                        .anySatisfy(r -> assertThat(r.incarnationChanged()).isTrue());
                assertThat(seen).allSatisfy(r -> assertThat(r.alerts()).isEmpty());
                assertThat(seen).allSatisfy(r -> assertThat(r.orphans()).isEmpty());
                // every shard was synced by the tasks
                assertThat(seen.stream().mapToInt(SyncReport::shard).distinct().count())
                        .isEqualTo(f.keys.shards());
            } finally {
                scheduler.shutdownNow();
                workers.forEach(WorkerPool::close);
                clients.stream().filter(c -> c != f.quota).forEach(RedissonQuotaLedger::close);
            }
        }
    }

    private static String runId(RedisProcess redis) {
        String info = RedisProcess.command(redis.port(), "INFO", "server");
        return info.lines()
                .filter(l -> l.startsWith("run_id:"))
                .findFirst()
                .orElseThrow()
                .trim();
    }
}
