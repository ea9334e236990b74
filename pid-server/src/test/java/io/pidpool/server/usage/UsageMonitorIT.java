package io.pidpool.server.usage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.pidpool.client.internal.quota.RedissonQuotaLedger;
import io.pidpool.client.internal.quota.testing.RedisSupport;
import io.pidpool.core.advice.ModuleProjection;
import io.pidpool.core.advice.PidProjection;
import io.pidpool.core.advice.UsageAssembly.ModuleFacts;
import io.pidpool.core.advice.UsageAssembly.PidFacts;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.core.testing.ManualClock;
import io.pidpool.server.redis.RedisUsageReader;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/**
 * The monitor over a real Redis with the real ledger scripts; the database facts are a fixed list and
 * leadership a switch, so the test decides who leads. Time of the reports is a manual clock in the
 * middle of the real month (the counters are written for that month).
 */
class UsageMonitorIT {
    static final ModuleKey A = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey B = ModuleKey.parse("ops#chat#bot");

    final RedissonClient redisson = RedisSupport.client(RedisSupport.sharedUrl());
    final RedissonQuotaLedger ledger =
            RedisSupport.ledger(redisson, RedisSupport.randomCluster(), "c1").build();
    final MonthlyWindow window = new MonthlyWindow(ZoneOffset.UTC);
    final QuotaMonth month = window.monthOf(Instant.now());
    /** The middle of the current month: half of it has passed. */
    final ManualClock clock =
            new ManualClock(window.start(month).plus(window.length(month).dividedBy(2)));

    final AtomicBoolean leading = new AtomicBoolean();
    final FakeFacts facts = new FakeFacts();
    UsageMonitor monitor;

    final class FakeFacts implements UsageFacts {
        final AtomicInteger leaderChecks = new AtomicInteger();
        volatile List<PidFacts> pids = List.of(
                new PidFacts("a1", A, PidAvailability.ACTIVE, 100, 20),
                new PidFacts("a2", A, PidAvailability.ACTIVE, 100, 0),
                new PidFacts("b1", B, PidAvailability.ACTIVE, 50, 0));

        @Override
        public List<ModuleFacts> modules() {
            return List.of(
                    new ModuleFacts(ModuleConfig.of(A, 2), 2),
                    new ModuleFacts(new ModuleConfig(B, 1, 400, 0, Map.of()), 1));
        }

        @Override
        public List<PidFacts> pids() {
            return pids;
        }

        @Override
        public boolean isLeader() {
            leaderChecks.incrementAndGet();
            return leading.get();
        }
    }

    @AfterEach
    void tearDown() {
        if (monitor != null) {
            monitor.close();
        }
        RedisSupport.drop(redisson, ledger.keys());
        ledger.close();
        redisson.shutdown();
    }

    UsageMonitor monitor(Duration interval) {
        monitor = new UsageMonitor(
                facts,
                new RedisUsageReader(redisson, ledger.keys()),
                window,
                OverageTariff.of(OverageTariff.Tier.of(100, "0.01"), OverageTariff.Tier.unbounded("0.02")),
                UsageProjector.blended(),
                clock,
                interval);
        return monitor;
    }

    void provision() {
        ledger.setLimit("a1", 120);
        ledger.setLimit("a2", 100);
        ledger.setLimit("b1", 50);
        ledger.setLimit("stale", 10); // deleted from the database since
        ledger.tryDeduct("a1", month, 70, "d1");
        ledger.tryDeduct("a2", month, 30, "d2");
        ledger.tryDeduct("b1", month, 40, "d3");
        ledger.refund("b1", month, "d3", "r3", 10);
        ledger.tryDeduct("stale", month, 3, "d4");
    }

    @Test
    void aFollowerScansOnDemandAndProjectsTheRedisFigures() {
        provision();
        UsageMonitor m = monitor(Duration.ofHours(1)).start(Duration.ZERO);
        assertThat(m.latest()).isEmpty();

        UsageReport report = m.current();
        assertThat(m.latest()).containsSame(report);
        assertThat(report.at()).isEqualTo(clock.instant());
        PidProjection a1 = pid(report, "a1");
        assertThat(a1.used()).isEqualTo(70);
        assertThat(a1.remaining()).isEqualTo(30);
        assertThat(pid(report, "b1").used()).isEqualTo(30); // 40 deducted, 10 refunded
        assertThat(report.pids()).extracting(PidProjection::id).containsExactly("a1", "a2", "b1");

        ModuleProjection a = report.module(A).orElseThrow();
        // half the month gone, 100 used: 100 more to come, into the 100 left: no overage
        assertThat(a.used()).isEqualTo(100);
        assertThat(a.remaining()).isEqualTo(100);
        assertThat(a.projectedUsed()).isEqualTo(200);
        assertThat(a.projectedOverage()).isZero();
        ModuleProjection b = report.module(B).orElseThrow();
        // observed 30 in half a month and 400/month configured, blended: overage above b1's 50
        assertThat(b.projectedUsed()).isGreaterThan(b.quota());
        assertThat(b.projectedOverage()).isEqualTo(b.projectedUsed() - 50);
        assertThat(b.projectedOverageCost()).isPositive();
        assertThat(report.totalUsed()).isEqualTo(130);

        UsageMonitor.ScanStats stats = m.lastScan().orElseThrow();
        assertThat(stats.pids()).isEqualTo(3);
        assertThat(stats.unknownPids()).isEqualTo(1); // "stale"
        assertThat(stats.withoutCounter()).isZero();

        // within the interval the same report is answered; after it, a new scan
        ledger.tryDeduct("a2", month, 5, "d5");
        assertThat(m.current()).isSameAs(report);
        clock.advance(Duration.ofHours(1).plusMillis(1));
        UsageReport later = m.current();
        assertThat(later).isNotSameAs(report);
        assertThat(pid(later, "a2").used()).isEqualTo(35);
        assertThat(m.scans()).isEqualTo(2);
    }

    @Test
    void onlyTheLeadersTimerScansAndTellsTheListeners() {
        provision();
        UsageMonitor m = monitor(Duration.ofMillis(100));
        List<UsageReport> heard = new CopyOnWriteArrayList<>();
        m.onScan(heard::add);
        m.onScan(r -> {
            throw new IllegalStateException("a broken listener");
        });
        m.start(Duration.ZERO);
        // not leading: the timer ticks (it asks whether it leads) but does not scan
        await().atMost(Duration.ofSeconds(30)).until(() -> facts.leaderChecks.get() >= 3);
        assertThat(m.scans()).isZero();
        assertThat(heard).isEmpty();

        leading.set(true);
        await().atMost(Duration.ofSeconds(30)).until(() -> heard.size() >= 2);
        assertThat(m.latest()).isPresent();
        assertThat(pid(heard.get(heard.size() - 1), "a1").used()).isEqualTo(70);
        assertThat(m.failures()).isZero();
    }

    @Test
    void redisDownIsUnavailableNotAStaleAnswer() {
        provision();
        UsageMonitor m = monitor(Duration.ofHours(1));
        RedissonClient dead = RedisSupport.client(RedisSupport.sharedUrl());
        dead.shutdown();
        UsageMonitor broken = new UsageMonitor(
                facts,
                new RedisUsageReader(dead, ledger.keys()),
                window,
                OverageTariff.free(),
                UsageProjector.blended(),
                clock,
                Duration.ofHours(1));
        try {
            assertThatThrownBy(broken::current).isInstanceOfSatisfying(PidPoolException.class, e -> assertThat(e.code())
                    .isEqualTo(ErrorCode.UNAVAILABLE));
            assertThat(broken.latest()).isEmpty();
        } finally {
            broken.close();
        }
        assertThat(m.current().pids()).hasSize(3);
    }

    static PidProjection pid(UsageReport report, String id) {
        return report.pids().stream().filter(p -> p.id().equals(id)).findFirst().orElseThrow();
    }
}
