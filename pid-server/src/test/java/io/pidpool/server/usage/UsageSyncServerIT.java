package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.Permit;
import io.pidpool.client.PidClient;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.server.runtime.PidServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The usage ledger sync runs inside a real {@link PidServer} (embedded ZooKeeper, the shared Redis,
 * H2): a real {@link PidClient} takes permits and refunds them, and every deduction and refund shows
 * up in the database ledger exactly once, written by the server's pid-worker tasks.
 */
class UsageSyncServerIT {
    static final ModuleKey M = ModuleKey.parse("fin#risk#scorer");

    @TempDir
    Path dir;

    record Granted(String pid, String deductionId, long commands) {}

    @Test
    void everyDeductionAndRefundReachesTheDatabaseLedgerExactlyOnce() throws Exception {
        try (ServerWorld world = new ServerWorld(dir)) {
            PidServer server = world.startServer("monitoring: { syncIntervalMs: 300 }");
            assertThat(server.usageSync()).isNotNull();
            ServerWorld.awaitLeader(server);
            ServerWorld.apply(
                    server,
                    new Operation.SetServers<>(M, 1, 0),
                    new Operation.Add<>(
                            M,
                            List.of(
                                    new PidSpec<>("p1", "pw1", 40, 0, Map.of()),
                                    new PidSpec<>("p2", "pw2", 40, 0, Map.of()),
                                    new PidSpec<>("p3", "pw3", 40, 0, Map.of()))));
            PidClient client = world.startClient(M.toString(), "box", ServerWorld.quietListener());
            await().atMost(ServerWorld.WAIT).until(() -> client.heldPids().equals(Set.of("p1", "p2", "p3")));

            List<Granted> granted = new ArrayList<>();
            // the leader provisions the limits shortly after the ADD: wait for the first grant
            await().atMost(ServerWorld.WAIT).pollInterval(Duration.ofMillis(50)).until(() -> {
                Optional<Permit> p = client.tryAcquire(1);
                p.ifPresent(permit -> granted.add(new Granted(permit.pid(), permit.deductionId(), 1)));
                return p.isPresent();
            });
            for (int i = 0; i < 40; i++) {
                long n = 1 + i % 3;
                Permit p = client.tryAcquire(n).orElseThrow();
                granted.add(new Granted(p.pid(), p.deductionId(), n));
            }
            // refunds: every 4th permit fully in two parts, every 5th once; each refund sent twice
            Map<String, Long> refunded = new HashMap<>();
            Map<String, Long> refundAmounts = new TreeMap<>();
            for (int i = 0; i < granted.size(); i++) {
                Granted g = granted.get(i);
                if (i % 4 == 0 && g.commands() >= 2) {
                    refund(client, g, "r-" + i + "-a", 1, refunded, refundAmounts);
                    refund(client, g, "r-" + i + "-b", g.commands() - 1, refunded, refundAmounts);
                } else if (i % 5 == 0) {
                    refund(client, g, "r-" + i, 1, refunded, refundAmounts);
                }
            }
            assertThat(refundAmounts).isNotEmpty();

            DataSource db = server.database().dataSource();
            await().atMost(ServerWorld.WAIT)
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> count(db, "SELECT COUNT(*) FROM usage_deduction") == granted.size()
                            && count(db, "SELECT COUNT(*) FROM usage_refund") == refundAmounts.size());

            // exactly once: the same ids, each once, with the amounts the client was answered
            Map<String, long[]> deductions = new HashMap<>();
            query(
                    db,
                    "SELECT deduction_id, pid_id, amount, refunded_total FROM usage_deduction",
                    rs -> deductions.put(
                            rs.getString(1), new long[] {rs.getString(2).hashCode(), rs.getLong(3), rs.getLong(4)}));
            assertThat(deductions).hasSize(granted.size());
            for (Granted g : granted) {
                long[] row = deductions.get(g.deductionId());
                assertThat(row)
                        .as("deduction %s in the ledger", g.deductionId())
                        .isNotNull();
                assertThat(row[0]).isEqualTo(g.pid().hashCode());
                assertThat(row[1]).isEqualTo(g.commands());
                assertThat(row[2]).isEqualTo(refunded.getOrDefault(g.deductionId(), 0L));
            }
            Map<String, Long> refundRows = new TreeMap<>();
            query(
                    db,
                    "SELECT refund_id, amount FROM usage_refund",
                    rs -> refundRows.put(rs.getString(1), rs.getLong(2)));
            assertThat(refundRows).isEqualTo(refundAmounts);

            // the ledger's net usage per PID equals what Redis counts
            UsageLedger ledger =
                    server.database().repositories(java.time.Clock.systemUTC()).usage();
            Map<String, Long> net = new TreeMap<>(ledger.netUsageByPid(YearMonth.now(ZoneOffset.UTC)));
            Map<String, Long> expected = new TreeMap<>();
            for (Granted g : granted) {
                expected.merge(g.pid(), g.commands() - refunded.getOrDefault(g.deductionId(), 0L), Long::sum);
            }
            expected.values().removeIf(v -> v == 0);
            net.values().removeIf(v -> v == 0);
            assertThat(net).isEqualTo(expected);

            // written by this server's worker tasks, one per shard, topped up by the timer
            assertThat(server.usageSync().passes()).isPositive();
            assertThat(server.usageSync().recorded()).isEqualTo(granted.size() + refundAmounts.size());
            assertThat(server.usageSync().passesNeedingAttention()).isZero();
            assertThat(count(db, "SELECT COUNT(DISTINCT task_key) FROM pidpool_task WHERE task_type = 'usage-sync'"))
                    .isEqualTo(server.usageSync().keys().shards());
        }
    }

    private static void refund(
            PidClient client,
            Granted g,
            String refundId,
            long n,
            Map<String, Long> refunded,
            Map<String, Long> refundAmounts) {
        client.refund(g.deductionId(), refundId, n);
        client.refund(g.deductionId(), refundId, n); // idempotent: changes nothing
        refunded.merge(g.deductionId(), n, Long::sum);
        refundAmounts.put(refundId, n);
    }

    interface RowReader {
        void read(ResultSet rs) throws SQLException;
    }

    static void query(DataSource db, String sql, RowReader reader) throws SQLException {
        try (Connection c = db.getConnection();
                PreparedStatement s = c.prepareStatement(sql);
                ResultSet rs = s.executeQuery()) {
            while (rs.next()) {
                reader.read(rs);
            }
        }
    }

    static long count(DataSource db, String sql) throws SQLException {
        long[] n = new long[1];
        query(db, sql, rs -> n[0] = rs.getLong(1));
        return n[0];
    }
}
