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
    private final AtomicReference<Report> last = new AtomicReference<>();
    private ScheduledExecutorService scheduler;

    HealthMonitor(Map<String, Supplier<Component>> probes) {
        this.probes = new LinkedHashMap<>(probes);
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
        return last.get();
    }

    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
        }
    }
}
