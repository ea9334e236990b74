package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.internal.quota.testing.Crc16;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.QuotaMonth;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class QuotaKeysTest {
    private final QuotaKeys keys = new QuotaKeys("default", 16);
    private final QuotaMonth nov = QuotaMonth.parse("2026-11");

    @Test
    void everyKeyOfAPidLiesInItsShardsClusterSlot() {
        for (String pid : List.of("u1", "acct@example.com", "a.b-c_d", "x".repeat(128))) {
            int shard = keys.shardOf(pid);
            List<String> all = List.of(
                    keys.pids(shard),
                    keys.pids(shard) + ":topic", // Redisson's invalidation channel for the near cache
                    keys.usage(pid, nov),
                    keys.deductionIndex(shard, nov),
                    keys.events(shard),
                    keys.sequences(shard),
                    keys.offsets(shard));
            int slot = Crc16.slot(all.get(0));
            assertThat(all)
                    .as(pid)
                    .allSatisfy(k -> assertThat(Crc16.slot(k)).as(k).isEqualTo(slot));
        }
    }

    @Test
    void keysAreReadableStrings() {
        assertThat(keys.usage("u1", nov)).isEqualTo("pidpool:{default:" + keys.shardOf("u1") + "}:u:u1:2026-11");
        assertThat(keys.events(3)).isEqualTo("pidpool:{default:3}:events");
        assertThat(keys.layout()).isEqualTo("pidpool:{default}:layout");
    }

    @Test
    void theShardOfAPidIsStableAndSpreadsPids() {
        // fixed values: every process, every JVM must agree (crc32 of the UTF-8 bytes)
        assertThat(keys.shardOf("u1")).isEqualTo(new QuotaKeys("other", 16).shardOf("u1"));
        Map<Integer, Integer> counts = new HashMap<>();
        for (int i = 0; i < 16_000; i++) {
            counts.merge(keys.shardOf("pid-" + i), 1, Integer::sum);
        }
        assertThat(counts).hasSize(16);
        assertThat(counts.values()).allSatisfy(c -> assertThat(c).isBetween(850, 1150));
    }

    @Test
    void differentShardsUseDifferentSlots() {
        QuotaKeys wide = new QuotaKeys("default", 64);
        long distinct = java.util.stream.IntStream.range(0, 64)
                .map(s -> Crc16.slot(wide.events(s)))
                .distinct()
                .count();
        assertThat(distinct).isEqualTo(64);
    }

    @Test
    void badLayoutsAreRejected() {
        assertThatThrownBy(() -> new QuotaKeys("a{b}", 4))
                .isInstanceOf(PidPoolException.class)
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("cluster");
        assertThatThrownBy(() -> new QuotaKeys("c", 0))
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("shards");
        assertThatThrownBy(() -> keys.events(16))
                .extracting(e -> ((PidPoolException) e).field())
                .isEqualTo("shard");
    }
}
