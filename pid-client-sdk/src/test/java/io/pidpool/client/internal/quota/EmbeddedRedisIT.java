package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.testing.RedisProcess;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.quota.DeductResult;
import io.pidpool.core.quota.QuotaMonth;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The fallback for machines without Redis: the redis-server inside {@code embedded-redis} (6.2)
 * starts here and runs every script (XADD, exclusive XRANGE and XTRIM MINID need 6.2).
 */
class EmbeddedRedisIT {
    @Test
    void theEmbeddedServerRunsTheQuotaScripts() {
        try (RedisProcess redis = RedisProcess.start(false, RedisProcess.embeddedBinary())) {
            assertThat(RedisProcess.command(redis.port(), "INFO", "server")).contains("redis_version:6.2");
            RedissonClient client = RedisSupport.client(redis.url());
            try (RedissonQuotaLedger ledger =
                    RedisSupport.ledger(client, "embedded", "c1").build()) {
                QuotaMonth nov = QuotaMonth.parse("2026-11");
                ledger.setLimit("u1", 5);
                assertThat(ledger.tryDeduct("u1", nov, 3, "d1").granted()).isTrue();
                assertThat(ledger.tryDeductAll(List.of(
                                new DeductRequest("u1", nov, 2, "d2", true),
                                new DeductRequest("u1", nov, 1, "d3", true))))
                        .extracting(DeductResult::granted)
                        .containsExactly(true, false);
                assertThat(ledger.refund("u1", nov, "d1", "r1", 1).applied()).isTrue();
                ledger.reset("u1", nov);
                UsageEventLog log = ledger.events();
                int shard = ledger.keys().shardOf("u1");
                List<UsageEvent> events = log.read(shard, UsageEventLog.START, 10);
                assertThat(events).hasSize(4);
                log.ack(shard, "db", events.get(1).offset());
                assertThat(log.trim(shard)).isEqualTo(2);
                assertThat(log.read(shard, events.get(0).offset(), 10)).hasSize(2);
            } finally {
                client.shutdown();
            }
        }
    }
}
