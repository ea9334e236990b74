package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.quota.QuotaUsage;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** What the contract cannot see: the data as Redis holds it, expiry, script reloads, layout checks, outages. */
class RedissonQuotaLedgerStorageIT {
    private static final QuotaMonth NOV = QuotaMonth.parse("2026-11");
    private static RedissonClient redisson;

    private final String cluster = RedisSupport.randomCluster();
    private final ManualClock clock = ManualClock.at("2026-11-20T10:00:00Z");
    private RedissonQuotaLedger ledger;

    @BeforeAll
    static void connect() {
        redisson = RedisSupport.client(RedisSupport.sharedUrl());
    }

    @AfterAll
    static void disconnect() {
        redisson.shutdown();
    }

    @AfterEach
    void drop() {
        if (ledger != null) {
            ledger.close();
            RedisSupport.drop(redisson, ledger.keys());
        }
    }

    private String hget(String key, String field) {
        return redisson.<String, String>getMap(key, StringCodec.INSTANCE).get(field);
    }

    @Test
    void aRefundRecordWrittenBeforeRefundIdsWereScopedByDeductionStillDeduplicates() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").clock(clock).build();
        QuotaKeys keys = ledger.keys();
        ledger.setLimit("u1", 10);
        ledger.tryDeduct("u1", NOV, 7, "d1");
        ledger.tryDeduct("u1", NOV, 2, "d2");
        String usage = keys.usage("u1", NOV);
        // the old layout: r:<refundId>, one per PID and month
        redisson.<String, String>getMap(usage, StringCodec.INSTANCE)
                .putAll(java.util.Map.of("r:r1", "d1|2|2|7|7", "d:d1", "7|7|10|2", "used", "7"));

        assertThat(ledger.refund("u1", NOV, "d1", "r1", 2))
                .isInstanceOf(io.pidpool.core.quota.RefundResult.RefundDuplicate.class);
        assertThat(ledger.refund("u1", NOV, "d2", "r1", 1).applied()).isTrue();
        assertThat(ledger.usage("u1", NOV).used()).isEqualTo(6);
    }

    @Test
    void theLedgerIsPlainStringsUnderOneShardTag() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").clock(clock).build();
        QuotaKeys keys = ledger.keys();
        ledger.setLimit("u1", 10);
        ledger.tryDeduct("u1", NOV, 7, "d1");
        ledger.refund("u1", NOV, "d1", "r1", 2);
        int shard = keys.shardOf("u1");

        assertThat(hget(keys.pids(shard), "u1")).isEqualTo("10|1");
        String usage = keys.usage("u1", NOV);
        assertThat(usage).startsWith("pidpool:{" + cluster + ":" + shard + "}:");
        assertThat(hget(usage, "used")).isEqualTo("5");
        assertThat(hget(usage, "d:d1")).isEqualTo("7|7|10|2");
        assertThat(hget(usage, "r:d1:r1")).isEqualTo("d1|2|2|7|5");
        assertThat(redisson.getKeys().getKeysStream().filter(k -> k.startsWith("pidpool:{" + cluster)))
                .allSatisfy(k -> assertThat(k).matches("pidpool:\\{" + cluster + "(:\\d+)?}:.*"));
        assertThat(redisson.<String>getBucket(keys.layout(), StringCodec.INSTANCE)
                        .get())
                .isEqualTo("shards=4");
    }

    @Test
    void monthKeysExpireRetentionAfterTheLaterOfMonthEndAndLastWrite() {
        // expiry is absolute (EXPIREAT) and Redis counts down on its own clock: use the real one
        ledger = RedisSupport.ledger(redisson, cluster, "c1").build();
        QuotaMonth current = new QuotaMonth(YearMonth.now(ZoneOffset.UTC));
        ledger.setLimit("u1", 10);
        Instant before = Instant.now();
        ledger.tryDeduct("u1", current, 1, "d1");
        long ttl = redisson.getKeys().remainTimeToLive(ledger.keys().usage("u1", current));

        Instant expiry = current.next()
                .value()
                .atDay(1)
                .atStartOfDay()
                .toInstant(ZoneOffset.UTC)
                .plus(Duration.ofDays(101));
        assertThat(ttl)
                .isBetween(
                        Duration.between(before, expiry).toMillis() - 10_000,
                        Duration.between(before, expiry).toMillis() + 1000);
        assertThat(redisson.getKeys().remainTimeToLive(ledger.keys().deductionIndex(0, current)))
                .as("no index without an indexed deduction")
                .isEqualTo(-2);

        QuotaMonth old = current.previous().previous().previous().previous().previous();
        ledger.tryDeduct(new DeductRequest("u1", old, 1, "d1", true));
        long oldTtl = redisson.getKeys().remainTimeToLive(ledger.keys().usage("u1", old));
        assertThat(oldTtl)
                .as("a past month lives retention after its last write, not 0")
                .isBetween(
                        Duration.ofDays(100).toMillis() - 10_000,
                        Duration.ofDays(100).toMillis() + 1000);
        assertThat(redisson.getKeys()
                        .remainTimeToLive(
                                ledger.keys().deductionIndex(ledger.keys().shardOf("u1"), old)))
                .isBetween(
                        Duration.ofDays(100).toMillis() - 10_000,
                        Duration.ofDays(100).toMillis() + 1000);
    }

    @Test
    void aMalformedPidEntryWrittenByAnotherToolGrantsNothing() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").build();
        QuotaKeys keys = ledger.keys();
        redisson.<String, String>getMap(keys.pids(keys.shardOf("u1")), StringCodec.INSTANCE)
                .put("u1", "lots");

        assertThat(ledger.tryDeduct("u1", NOV, 1, "d1"))
                .isEqualTo(new DeductResult.Rejected("u1", NOV, "d1", 1, DeductResult.Reason.QUOTA_EXHAUSTED, 0, 0));
        ledger.setLimit("u1", 3);
        assertThat(ledger.tryDeduct("u1", NOV, 1, "d1").granted()).isTrue();
    }

    @Test
    void anotherShardCountForTheSameClusterIsRefused() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").build();

        assertThatThrownBy(() ->
                        RedisSupport.ledger(redisson, cluster, "c2").shards(8).build())
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("shards=4")
                .extracting(e -> ((PidPoolException) e).code())
                .isEqualTo(ErrorCode.ILLEGAL_STATE);
    }

    @Test
    void scriptsAreLoadedAgainAfterNoscriptAndAnOutageIsUnavailable() {
        try (RedisProcess own = RedisProcess.start(false)) {
            RedissonClient client = RedisSupport.client(own.url());
            try (RedissonQuotaLedger mine =
                    RedisSupport.ledger(client, cluster, "c1").build()) {
                mine.setLimit("u1", 10);
                assertThat(mine.tryDeduct("u1", NOV, 1, "d1").granted()).isTrue();

                assertThat(RedisProcess.command(own.port(), "SCRIPT", "FLUSH")).isEqualTo("+OK");

                assertThat(mine.tryDeduct("u1", NOV, 2, "d2")).isInstanceOf(DeductResult.Granted.class);
                assertThat(mine.tryDeductAll(List.of(new DeductRequest("u1", NOV, 1, "d3", true))))
                        .allMatch(DeductResult::granted);
                assertThat(mine.usage("u1", NOV)).isEqualTo(new QuotaUsage("u1", NOV, 4, 10));

                own.kill();

                assertThatThrownBy(() -> mine.tryDeduct("u1", NOV, 1, "d4"))
                        .isInstanceOf(PidPoolException.class)
                        .extracting(e -> ((PidPoolException) e).code())
                        .isEqualTo(ErrorCode.UNAVAILABLE);
                assertThatThrownBy(() -> mine.usage("u1", NOV))
                        .isInstanceOf(PidPoolException.class)
                        .extracting(e -> ((PidPoolException) e).code())
                        .isEqualTo(ErrorCode.UNAVAILABLE);
                // a PID of a shard whose near map does not exist yet: creating it needs Redis
                String elsewhere = java.util.stream.IntStream.range(0, 100)
                        .mapToObj(i -> "x" + i)
                        .filter(p -> mine.keys().shardOf(p) != mine.keys().shardOf("u1"))
                        .findFirst()
                        .orElseThrow();
                assertThat(mine.nearCache().remaining(elsewhere, NOV)).isEmpty();
                try (PermitIssuer issuer = PermitIssuer.builder()
                        .ledger(mine)
                        .held(new io.pidpool.client.internal.quota.testing.FakeHold(java.util.Set.of(elsewhere)))
                        .ids(io.pidpool.core.id.SnowflakeIds.builder()
                                .workerId(9)
                                .build())
                        .settleDelay(java.time.Duration.ofHours(1))
                        .build()) {
                    assertThatThrownBy(() -> issuer.tryAcquire(1))
                            .isInstanceOf(PidPoolException.class)
                            .extracting(e -> ((PidPoolException) e).code())
                            .isEqualTo(ErrorCode.UNAVAILABLE);
                    assertThat(issuer.uncertainCount()).isEqualTo(1);
                }
            } finally {
                client.shutdown();
            }
        }
    }

    @Test
    void pipelinedDeductionsAnswerLikeSingleOnesAcrossShards() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").build();
        List<String> pids = List.of("p0", "p1", "p2", "p3", "p4", "p5");
        pids.forEach(p -> ledger.setLimit(p, 3));
        assertThat(pids.stream().map(ledger.keys()::shardOf).distinct().count()).isGreaterThan(1);

        List<DeductRequest> batch = new java.util.ArrayList<>();
        for (String p : pids) {
            batch.add(new DeductRequest(p, NOV, 2, "a-" + p, true));
            batch.add(new DeductRequest(p, NOV, 2, "b-" + p, true)); // exceeds: 2 + 2 > 3
            batch.add(new DeductRequest(p, NOV, 2, "a-" + p, true)); // a retry within the batch
        }

        List<DeductResult> results = ledger.tryDeductAll(batch);

        for (int i = 0; i < pids.size(); i++) {
            String p = pids.get(i);
            DeductResult.Granted g = new DeductResult.Granted(p, NOV, "a-" + p, 2, 2, 3);
            assertThat(results.get(3 * i)).isEqualTo(g);
            assertThat(results.get(3 * i + 1))
                    .isEqualTo(
                            new DeductResult.Rejected(p, NOV, "b-" + p, 2, DeductResult.Reason.QUOTA_EXHAUSTED, 2, 3));
            assertThat(results.get(3 * i + 2)).isEqualTo(new DeductResult.AlreadyGranted(g));
            assertThat(ledger.pidOfDeduction(ledger.keys().shardOf(p), NOV, "a-" + p))
                    .contains(p);
        }
        assertThat(ledger.pidOfDeduction(0, NOV, "nope")).isEmpty();
    }

    @Test
    void randomPipelinedBatchesAnswerExactlyLikeTheReferenceModel() {
        ledger = RedisSupport.ledger(redisson, cluster, "c1").build();
        java.util.SplittableRandom random = new java.util.SplittableRandom(2026_11_21);
        List<String> pids = List.of("m0", "m1", "m2", "m3", "m4");
        List<QuotaMonth> months = List.of(NOV, NOV.next());
        java.util.Map<String, Long> limits = new java.util.HashMap<>();
        java.util.Map<String, io.pidpool.core.quota.MonthLedger> models = new java.util.HashMap<>();
        for (String p : pids) {
            long limit = random.nextLong(0, 80);
            ledger.setLimit(p, limit);
            limits.put(p, limit);
        }
        List<String> grants = new java.util.ArrayList<>();
        for (int step = 0; step < 150; step++) {
            List<DeductRequest> batch = new java.util.ArrayList<>();
            int size = 1 + random.nextInt(12);
            for (int i = 0; i < size; i++) {
                batch.add(new DeductRequest(
                        pids.get(random.nextInt(pids.size())),
                        months.get(random.nextInt(months.size())),
                        1 + random.nextInt(random.nextBoolean() ? 3 : 12),
                        "d" + random.nextInt(25), // repeats: retries and conflicts, within and across batches
                        random.nextBoolean()));
            }
            List<DeductResult> results = ledger.tryDeductAll(batch);
            for (int i = 0; i < size; i++) {
                DeductRequest r = batch.get(i);
                io.pidpool.core.quota.MonthLedger model = models.computeIfAbsent(
                        r.pid() + "|" + r.month(), k -> new io.pidpool.core.quota.MonthLedger(r.pid(), r.month()));
                assertThat(results.get(i))
                        .as("step %d, request %d: %s", step, i, r)
                        .isEqualTo(model.deduct(r.deductionId(), r.amount(), limits.get(r.pid())));
                if (results.get(i) instanceof DeductResult.Granted g) {
                    grants.add(g.pid() + "|" + g.month() + "|" + g.deductionId() + "|" + g.amount() + "|"
                            + g.usedAfter() + "|" + g.limit());
                }
            }
            if (random.nextInt(10) == 0) { // refunds and resets in between, through the single scripts
                String p = pids.get(random.nextInt(pids.size()));
                QuotaMonth m = months.get(random.nextInt(months.size()));
                io.pidpool.core.quota.MonthLedger model =
                        models.computeIfAbsent(p + "|" + m, k -> new io.pidpool.core.quota.MonthLedger(p, m));
                if (random.nextBoolean()) {
                    String d = "d" + random.nextInt(25);
                    assertThat(ledger.refund(p, m, d, "r" + step, 1)).isEqualTo(model.refund(d, "r" + step, 1));
                } else {
                    ledger.reset(p, m);
                    model.reset();
                }
            }
        }
        for (String p : pids) {
            for (QuotaMonth m : months) {
                io.pidpool.core.quota.MonthLedger model = models.get(p + "|" + m);
                assertThat(ledger.usage(p, m).used()).isEqualTo(model == null ? 0 : model.used());
            }
        }
        // and the log holds each grant once, in the order Redis granted them
        List<UsageEvent> events = new java.util.ArrayList<>();
        for (int s = 0; s < ledger.keys().shards(); s++) {
            events.addAll(ledger.events().read(s, UsageEventLog.START, 10_000));
        }
        ClientSequenceTracker tracker = new ClientSequenceTracker();
        assertThat(events).allSatisfy(e -> assertThat(tracker.accept(e)).isEqualTo(ClientSequenceTracker.Verdict.NEW));
        assertThat(tracker.gaps()).isEmpty();
        // one deduction event per grant (batch entries expanded), with what the grant answered
        assertThat(events.stream()
                        .filter(e -> e.kind() == UsageEvent.Kind.DEDUCTION)
                        .map(e -> e.pid() + "|" + e.month() + "|" + e.deductionId() + "|" + e.amount() + "|"
                                + e.usedAfter() + "|" + e.limit()))
                .containsExactlyInAnyOrderElementsOf(grants);
    }
}
