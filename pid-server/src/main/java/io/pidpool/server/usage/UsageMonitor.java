package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.LatestReport;
import io.pidpool.core.advice.UsageAssembly;
import io.pidpool.core.advice.UsageProjector;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.MonthlyWindow;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.core.quota.QuotaMonth;
import io.pidpool.server.redis.RedisUsageReader;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leader's periodic full check of usage : every {@code interval}, if this server
 * leads, read every PID's counter from Redis in a few pipelined script calls ({@link
 * RedisUsageReader}), join it with the database's PIDs and modules ({@link UsageFacts}) into a
 * {@link io.pidpool.core.advice.UsageSnapshot} ({@link UsageAssembly}), project it to month end
 * ({@link UsageProjector}) and publish the report ({@link UsageReports}).
 *
 * <p>Followers do not scan on the timer; {@link #current()} scans on demand when the report they
 * hold is older than the interval, so every server answers {@code /api/v1/usage} with figures at most
 * one interval old.
 *
 * <p>Concurrency: the timer runs on one daemon thread; on-demand scans on the caller's thread. One
 * scan at a time per server ({@code scanLock}); a caller that finds a fresh report after waiting for
 * the lock uses it instead of scanning again. Reports are published through a lock-free {@link
 * LatestReport}; the statistics are atomic.
 */
public final class UsageMonitor implements UsageReports, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UsageMonitor.class);

    private final UsageFacts facts;
    private final RedisUsageReader reader;
    private final MonthlyWindow window;
    private final OverageTariff tariff;
    private final UsageProjector projector;
    private final Clock clock;
    private final Duration interval;
    private final LatestReport latest;
    private final ReentrantLock scanLock = new ReentrantLock();
    private final List<Consumer<UsageReport>> listeners = new CopyOnWriteArrayList<>();
    private final AtomicReference<ScanStats> lastScan = new AtomicReference<>();
    private final AtomicLong scans = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicBoolean started = new AtomicBoolean();
    private final ScheduledExecutorService timer;

    /**
     * What the last scan did and how long its parts took.
     *
     * @param facts reading the database/ZooKeeper read model
     * @param redis reading Redis ({@code roundTrips} script calls)
     * @param project assembling and projecting
     * @param withoutCounter PIDs with no usage counter this month (counted as 0)
     * @param unknownPids counters of PIDs the database does not know (left out)
     */
    public record ScanStats(
            Instant at,
            int pids,
            int modules,
            Duration facts,
            Duration redis,
            Duration project,
            int roundTrips,
            int withoutCounter,
            int unknownPids,
            int clamped) {
        public Duration total() {
            return facts.plus(redis).plus(project);
        }
    }

    public UsageMonitor(
            UsageFacts facts,
            RedisUsageReader reader,
            MonthlyWindow window,
            OverageTariff tariff,
            UsageProjector projector,
            Clock clock,
            Duration interval) {
        this.facts = requireNonNull(facts, "facts");
        this.reader = requireNonNull(reader, "reader");
        this.window = requireNonNull(window, "window");
        this.tariff = requireNonNull(tariff, "tariff");
        this.projector = requireNonNull(projector, "projector");
        this.clock = requireNonNull(clock, "clock");
        this.interval = requireNonNull(interval, "interval");
        requireArgument(!interval.isNegative() && !interval.isZero(), "interval", "must be positive, was %s", interval);
        this.latest = new LatestReport(clock);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "usage-monitor");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the timer: the first scan after {@code firstDelay}, then one every interval while leading. */
    public UsageMonitor start(Duration firstDelay) {
        requireNonNull(firstDelay, "firstDelay");
        if (!started.compareAndSet(false, true)) {
            throw PidPoolException.illegalState("usage monitor was already started");
        }
        timer.scheduleWithFixedDelay(
                this::scheduledScan, firstDelay.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        LOG.info("usage monitor: the leader scans every {}", interval);
        return this;
    }

    private void scheduledScan() {
        try {
            if (!facts.isLeader()) {
                return;
            }
            UsageReport report = scan();
            for (Consumer<UsageReport> listener : listeners) {
                try {
                    listener.accept(report);
                } catch (RuntimeException e) {
                    LOG.warn("usage report listener {} failed", listener, e);
                }
            }
        } catch (RuntimeException e) {
            failures.incrementAndGet();
            LOG.warn("usage scan failed ({}); next try in {}", e.getMessage(), interval);
        }
    }

    @Override
    public Optional<UsageReport> latest() {
        return latest.latest();
    }

    @Override
    public UsageReport current() {
        Optional<UsageReport> fresh = latest.fresh(interval);
        if (fresh.isPresent()) {
            return fresh.get();
        }
        scanLock.lock();
        try {
            fresh = latest.fresh(interval); // another caller may have scanned while we waited
            return fresh.isPresent() ? fresh.get() : scan();
        } finally {
            scanLock.unlock();
        }
    }

    @Override
    public void onScan(Consumer<UsageReport> listener) {
        listeners.add(requireNonNull(listener, "listener"));
    }

    /** Runs one full scan now and publishes it (whether or not this server leads). */
    public UsageReport scan() {
        scanLock.lock();
        try {
            long t0 = System.nanoTime();
            var modules = facts.modules();
            var pids = facts.pids();
            long t1 = System.nanoTime();
            Instant at = clock.instant();
            QuotaMonth month = window.monthOf(at);
            RedisUsageReader.Read read = reader.read(month);
            long t2 = System.nanoTime();
            var changed = facts.modulesChangedSince(window.start(month));
            UsageAssembly assembly = UsageAssembly.assemble(
                    at,
                    window,
                    tariff,
                    modules,
                    pids,
                    read.used(),
                    key -> changed.isPresent() && !changed.get().contains(key));
            UsageReport report = projector.project(assembly.snapshot());
            long t3 = System.nanoTime();
            latest.publish(report);
            scans.incrementAndGet();
            ScanStats stats = new ScanStats(
                    at,
                    pids.size(),
                    report.modules().size(),
                    Duration.ofNanos(t1 - t0),
                    Duration.ofNanos(t2 - t1),
                    Duration.ofNanos(t3 - t2),
                    read.roundTrips(),
                    assembly.withoutCounter(),
                    assembly.unknownPids().size(),
                    assembly.clamped().size());
            lastScan.set(stats);
            if (!assembly.clamped().isEmpty()) {
                LOG.warn("usage scan: corrupt counters clamped for {}", assembly.clamped());
            }
            LOG.debug("usage scan: {}", stats);
            return report;
        } finally {
            scanLock.unlock();
        }
    }

    /** The last scan's statistics, if any. */
    public Optional<ScanStats> lastScan() {
        return Optional.ofNullable(lastScan.get());
    }

    /** Scans this server ran (timer and on demand). */
    public long scans() {
        return scans.get();
    }

    /** Timer scans that failed. */
    public long failures() {
        return failures.get();
    }

    public Duration interval() {
        return interval;
    }

    public MonthlyWindow window() {
        return window;
    }

    public boolean isLeader() {
        return facts.isLeader();
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
