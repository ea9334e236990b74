package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.client.internal.quota.UsageEventLog;
import io.pidpool.core.advice.Alert;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.UsageLedger;
import io.pidpool.worker.task.TaskHandler;
import io.pidpool.worker.task.TaskStore;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.redisson.api.RedissonClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The usage ledger sync as one server runs it (docs/usage-sync.md §2): the {@link UsageSyncTasks}
 * handler to register with the in-process pid-worker, and a timer that tops up one PENDING task per
 * quota shard every {@code interval} ({@link UsageSyncTasks#ensurePending()}), so that every
 * deduction and refund in Redis reaches the database ledger exactly once.
 *
 * <p>Every server of the cluster runs the timer; the worker ring decides which server runs which
 * shard's task (the task key fixes its slot), so the shards spread over the servers and move when one
 * dies. Duplicate enqueues and runs are harmless (see {@link UsageSyncTasks}). All servers use the
 * consumer name {@value #CONSUMER}, so whichever server runs a shard continues from the shared offset.
 *
 * <p>Concurrency: the timer runs on one daemon thread of its own; the handler on the worker's
 * threads; the counters are atomic. {@link #start(Runnable)} once, {@link #close()} any time.
 */
public final class UsageSyncService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(UsageSyncService.class);
    /** The consumer name in every shard's offsets hash, shared by all servers. */
    public static final String CONSUMER = "ledger-sync";

    private final UsageSyncTasks tasks;
    private final QuotaKeys keys;
    private final Duration interval;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong recorded = new AtomicLong();
    private final AtomicLong attention = new AtomicLong();
    private final AtomicLong topUps = new AtomicLong();
    private final Clock clock;
    private final Consumer<Alert> alerts;

    /**
     * @param redisson the server's client (caller-owned, {@code StringCodec})
     * @param keys the quota key layout: the cluster and its shard count (the SDK's)
     * @param ledger the database ledger
     * @param store the task table of the worker group that runs the handler
     * @param group that worker group
     * @param interval how often to top up the tasks
     */
    public UsageSyncService(
            RedissonClient redisson,
            QuotaKeys keys,
            UsageLedger ledger,
            TaskStore store,
            String group,
            Clock clock,
            Duration interval) {
        this(redisson, keys, ledger, store, group, clock, interval, alert -> {});
    }

    /**
     * As above; {@code alerts} receives the alert of every pass whose events the ledger refused
     * ({@link UsageLedgerAlerts}), e.g. {@code AlertService::raiseLater}. It must not block.
     */
    public UsageSyncService(
            RedissonClient redisson,
            QuotaKeys keys,
            UsageLedger ledger,
            TaskStore store,
            String group,
            Clock clock,
            Duration interval,
            Consumer<Alert> alerts) {
        requireNonNull(redisson, "redisson");
        this.clock = requireNonNull(clock, "clock");
        this.alerts = requireNonNull(alerts, "alerts");
        this.keys = requireNonNull(keys, "keys");
        this.interval = requireNonNull(interval, "interval");
        requireArgument(!interval.isNegative() && !interval.isZero(), "interval", "must be positive, was %s", interval);
        UsageLedgerSync sync =
                new UsageLedgerSync(UsageEventLog.reader(redisson, keys), redisson, ledger, CONSUMER, clock);
        this.tasks = new UsageSyncTasks(sync, store, group, clock, this::onReport);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "usage-sync-timer");
            t.setDaemon(true);
            return t;
        });
    }

    /** Task type → handler, to register with the worker before it starts. */
    public Map<String, TaskHandler> handlers() {
        return Map.of(UsageSyncTasks.TYPE, tasks.handler());
    }

    /** The task scheduler (for tests and tools). */
    public UsageSyncTasks tasks() {
        return tasks;
    }

    public QuotaKeys keys() {
        return keys;
    }

    /**
     * Starts the timer: tops up at once and then every interval; {@code afterEnqueue} runs when
     * tasks were enqueued (e.g. the worker's {@code wakeUp}). Failures (database or ring down) are
     * logged and retried next interval.
     */
    public UsageSyncService start(Runnable afterEnqueue) {
        requireNonNull(afterEnqueue, "afterEnqueue");
        if (!started.compareAndSet(false, true)) {
            throw PidPoolException.illegalState("usage sync was already started");
        }
        timer.scheduleWithFixedDelay(() -> topUp(afterEnqueue), 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        LOG.info(
                "usage ledger sync: {} shards of cluster {}, topped up every {}",
                keys.shards(),
                keys.cluster(),
                interval);
        return this;
    }

    private void topUp(Runnable afterEnqueue) {
        try {
            int enqueued = tasks.ensurePending();
            if (enqueued > 0) {
                topUps.addAndGet(enqueued);
                afterEnqueue.run();
            }
        } catch (RuntimeException e) {
            LOG.warn("usage sync: could not top up the shard tasks ({}); next try in {}", e.getMessage(), interval);
        }
    }

    private void onReport(SyncReport report) {
        passes.incrementAndGet();
        recorded.addAndGet(report.recorded() + report.compensatedFromStream() + report.recoveredFromRecords());
        if (report.alertWorthy()) {
            attention.incrementAndGet();
        }
        UsageLedgerAlerts.of(report, clock.instant()).ifPresent(alert -> {
            try {
                alerts.accept(alert);
            } catch (RuntimeException e) {
                LOG.warn("usage sync: could not raise alert {}: {}", alert.key(), e.getMessage());
            }
        });
    }

    /** Sync passes run by this server. */
    public long passes() {
        return passes.get();
    }

    /** Ledger entries this server wrote (recorded, compensated and recovered). */
    public long recorded() {
        return recorded.get();
    }

    /** Passes whose report needed attention (unfillable gaps, orphans, a lost sequence hash). */
    public long passesNeedingAttention() {
        return attention.get();
    }

    /** Tasks this server enqueued. */
    public long tasksEnqueued() {
        return topUps.get();
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
