package io.pidpool.server.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The full-scan reader against the real ledger scripts on a real Redis. */
class RedisUsageReaderIT {
    final RedissonClient redisson = RedisSupport.client(RedisSupport.sharedUrl());
    /** One shard of 1,000 PIDs: more than Redis keeps in a compact listpack (512), so HSCAN pages. */
    final RedissonQuotaLedger ledger = RedisSupport.ledger(redisson, RedisSupport.randomCluster(), "c1")
            .shards(1)
            .build();

    final QuotaMonth month = new QuotaMonth(YearMonth.now(ZoneOffset.UTC));

    @AfterEach
    void tearDown() {
        RedisSupport.drop(redisson, ledger.keys());
        ledger.close();
        redisson.shutdown();
    }

    @Test
    void readsEveryProvisionedPidsCounterInPagesPerShard() {
        Random random = new Random(42);
        Map<String, Long> expected = new HashMap<>();
        for (int i = 0; i < 1000; i++) {
            String pid = "pid-" + i;
            ledger.setLimit(pid, 1_000 + i);
            if (i % 7 != 0) { // every 7th has no counter this month
                long used = 1 + random.nextInt(50);
                ledger.tryDeduct(pid, month, used, "d-" + i);
                expected.put(pid, used);
            }
        }
        // a counter in the previous month must not be read as this month's
        ledger.tryDeduct("pid-0", month.previous(), 5, "old-0");

        RedisUsageReader reader = new RedisUsageReader(redisson, ledger.keys(), 7, Duration.ofSeconds(30));
        RedisUsageReader.Read read = reader.read(month);

        assertThat(read.counters()).hasSize(1000);
        assertThat(read.used()).isEqualTo(expected);
        assertThat(read.counters().get("pid-0").hasUsage()).isFalse();
        // pages of ~7: many round trips, every PID once
        assertThat(read.roundTrips()).isGreaterThan(50);
        for (String pid : expected.keySet()) {
            assertThat(read.counters().get(pid).used())
                    .isEqualTo(ledger.usage(pid, month).used());
        }

        RedisUsageReader onePage = new RedisUsageReader(redisson, ledger.keys());
        RedisUsageReader.Read again = onePage.read(month);
        assertThat(again.counters()).isEqualTo(read.counters());
        assertThat(again.roundTrips()).isLessThan(read.roundTrips());
    }

    @Test
    void worksOnTheRedis62ThatStandaloneEmbeds() {
        try (RedisProcess old = RedisProcess.start(false, RedisProcess.embeddedBinary())) {
            RedissonClient client = RedisSupport.client(old.url());
            RedissonQuotaLedger oldLedger = RedisSupport.ledger(client, RedisSupport.randomCluster(), "c1")
                    .build();
            try {
                oldLedger.setLimit("p1", 10);
                oldLedger.setLimit("p2", 10);
                oldLedger.tryDeduct("p1", month, 4, "d1");
                RedisUsageReader.Read read = new RedisUsageReader(client, oldLedger.keys()).read(month);
                assertThat(read.used()).isEqualTo(Map.of("p1", 4L));
                assertThat(read.counters()).containsKeys("p1", "p2");
            } finally {
                oldLedger.close();
                client.shutdown();
            }
        }
    }

    @Test
    void anEmptyClusterReadsAsNothing() {
        RedisUsageReader.Read read = new RedisUsageReader(redisson, ledger.keys()).read(month);
        assertThat(read.counters()).isEmpty();
        assertThat(read.roundTrips()).isEqualTo(1);
    }
}
