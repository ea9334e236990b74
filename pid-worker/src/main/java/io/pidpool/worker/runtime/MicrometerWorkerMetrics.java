package io.pidpool.worker.runtime;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.pidpool.core.ring.SlotRange;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link WorkerMetrics} on a Micrometer registry. Meters (tags {@code group}, {@code member}, and
 * {@code type} where a task type applies):
 *
 * <ul>
 *   <li>{@code pidpool.worker.tasks.done}, {@code .retried}, {@code .failed}, {@code .timeouts}
 *   <li>{@code pidpool.worker.claim.conflicts}, {@code pidpool.worker.settlements.lost}
 *   <li>{@code pidpool.worker.leases.reaped} (tag {@code outcome}: returned | failed)
 *   <li>{@code pidpool.worker.store.errors} (tag {@code operation})
 *   <li>gauges {@code pidpool.worker.backlog} (PENDING in this worker's ranges), {@code
 *       pidpool.worker.backlog.max.range} (the largest range backlog) and {@code
 *       pidpool.worker.ranges} (number of owned ranges)
 *   <li>gauge {@code pidpool.worker.backlog.unhandled} (tag {@code type}): PENDING tasks of a type
 *       no live member of the group runs, reported by the group's reporter only (0 elsewhere)
 * </ul>
 *
 * Per-range backlog has too many ranges for tags; {@code WorkerPool.backlogByRange()} gives it.
 */
public final class MicrometerWorkerMetrics implements WorkerMetrics {
    private final MeterRegistry registry;
    private final Tags tags;
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicLong maxRange = new AtomicLong();
    private final AtomicLong ranges = new AtomicLong();
    private final Map<String, AtomicLong> unhandled = new ConcurrentHashMap<>();

    public MicrometerWorkerMetrics(MeterRegistry registry, String group, String member) {
        this.registry = registry;
        this.tags = Tags.of("group", group, "member", member);
        Gauge.builder("pidpool.worker.backlog", backlog, AtomicLong::get)
                .tags(tags)
                .description("PENDING tasks in this worker's ranges")
                .register(registry);
        Gauge.builder("pidpool.worker.backlog.max.range", maxRange, AtomicLong::get)
                .tags(tags)
                .register(registry);
        Gauge.builder("pidpool.worker.ranges", ranges, AtomicLong::get)
                .tags(tags)
                .register(registry);
    }

    private Counter counter(String name, String type) {
        return registry.counter(name, tags.and("type", type));
    }

    @Override
    public void tasksDone(String type, int count) {
        counter("pidpool.worker.tasks.done", type).increment(count);
    }

    @Override
    public void taskRetried(String type) {
        counter("pidpool.worker.tasks.retried", type).increment();
    }

    @Override
    public void taskFailed(String type) {
        counter("pidpool.worker.tasks.failed", type).increment();
    }

    @Override
    public void handlerTimedOut(String type) {
        counter("pidpool.worker.tasks.timeouts", type).increment();
    }

    @Override
    public void claimConflicts(int count) {
        registry.counter("pidpool.worker.claim.conflicts", tags).increment(count);
    }

    @Override
    public void settlementsLost(int count) {
        registry.counter("pidpool.worker.settlements.lost", tags).increment(count);
    }

    @Override
    public void leasesReaped(int returned, int failed) {
        registry.counter("pidpool.worker.leases.reaped", tags.and("outcome", "returned"))
                .increment(returned);
        registry.counter("pidpool.worker.leases.reaped", tags.and("outcome", "failed"))
                .increment(failed);
    }

    @Override
    public void storeError(String operation) {
        registry.counter("pidpool.worker.store.errors", tags.and("operation", operation))
                .increment();
    }

    @Override
    public void backlog(Map<SlotRange, Long> pendingByRange) {
        backlog.set(pendingByRange.values().stream().mapToLong(Long::longValue).sum());
        maxRange.set(pendingByRange.values().stream()
                .mapToLong(Long::longValue)
                .max()
                .orElse(0));
        ranges.set(pendingByRange.size());
    }

    @Override
    public void unhandledBacklog(Map<String, Long> pendingByType) {
        unhandled.forEach((type, n) -> n.set(pendingByType.getOrDefault(type, 0L)));
        pendingByType.forEach((type, n) -> unhandled
                .computeIfAbsent(type, t -> {
                    AtomicLong g = new AtomicLong();
                    Gauge.builder("pidpool.worker.backlog.unhandled", g, AtomicLong::get)
                            .tags(tags.and("type", t))
                            .description("PENDING tasks of a type no live worker of the group runs")
                            .register(registry);
                    return g;
                })
                .set(n));
    }
}
