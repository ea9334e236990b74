package io.pidpool.server.runtime;

import io.pidpool.server.http.HealthCheck;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes the server's dependencies in the background and answers {@link #report()} from the last
 * round, so {@code /health} never waits on a hung dependency. A probe that throws counts as
 * {@code DOWN} with the exception's class and message.
 *
 * <p>Concurrency: probes run on one daemon thread ({@link #start}) or the caller's ({@link
 * #refresh}); the report is swapped atomically.
 */
final class HealthMonitor implements HealthCheck, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HealthMonitor.class);

    private final Map<String, Supplier<Component>> probes;
    /** Components read on every report: each a lookup of a state kept current elsewhere, never blocking. */
    private final Map<String, Supplier<Component>> live;

    private final AtomicReference<Report> last = new AtomicReference<>();
    private ScheduledExecutorService scheduler;

    HealthMonitor(Map<String, Supplier<Component>> probes) {
        this(probes, Map.of());
    }

    /**
     * @param live components whose supplier only reads a state another component keeps current (e.g.
     *     the database's background probe): asked on every {@link #report()}, so {@code /health}
     *     reflects them at once instead of up to one round late
     */
    HealthMonitor(Map<String, Supplier<Component>> probes, Map<String, Supplier<Component>> live) {
        this.probes = new LinkedHashMap<>(probes);
        this.live = new LinkedHashMap<>(live);
        this.last.set(Report.of(Map.of()));
    }

    /** Runs every probe now, on the calling thread, and returns the new report. */
    Report refresh() {
        Map<String, Component> components = new LinkedHashMap<>();
        probes.forEach((name, probe) -> {
            Component c;
            try {
                c = probe.get();
            } catch (RuntimeException e) {
                c = Component.down(e.getClass().getSimpleName() + ": " + e.getMessage());
            }
            components.put(name, c);
        });
        Report report = Report.of(components);
        Report previous = last.getAndSet(report);
        if (previous != null && previous.status() != report.status()) {
            log.warn("health changed from {} to {}: {}", previous.status(), report.status(), report.components());
        }
        return report;
    }

    /** Probes once now, then every {@code interval} in the background. */
    synchronized HealthMonitor start(Duration interval) {
        refresh();
        scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "pidpool-health");
            t.setDaemon(true);
            return t;
        });
        scheduler.scheduleWithFixedDelay(
                this::refreshLogged, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    private void refreshLogged() {
        try {
            refresh();
        } catch (RuntimeException e) {
            log.warn("health probe round failed", e);
        }
    }

    @Override
    public Report report() {
        Report report = last.get();
        if (live.isEmpty()) {
            return report;
        }
        Map<String, Component> components = new LinkedHashMap<>(report.components());
        live.forEach((name, probe) -> {
            try {
                components.put(name, probe.get());
            } catch (RuntimeException e) {
                components.put(name, Component.down(e.getClass().getSimpleName() + ": " + e.getMessage()));
            }
        });
        return Report.of(components);
    }

    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }
}
