package io.pidpool.server.usage;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.pidpool.core.advice.ModuleProjection;
import io.pidpool.core.advice.PidProjection;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's Micrometer registry in Prometheus text ({@code GET /metrics}): per-PID and per-module
 * usage gauges from the latest {@link UsageReport}, and a few server gauges.
 *
 * <table>
 *   <caption>Meters (Prometheus names)</caption>
 *   <tr><td>{@code pidpool_pid_used}, {@code _remaining}, {@code _utilisation},
 *       {@code _projected_used}, {@code _projected_overage_cost} {pid, module}</td><td>per PID</td></tr>
 *   <tr><td>{@code pidpool_module_used}, {@code _remaining}, {@code _utilisation},
 *       {@code _projected_used}, {@code _projected_overage_cost} {module}</td><td>per module</td></tr>
 *   <tr><td>{@code pidpool_usage_projected_overage_cost}, {@code pidpool_usage_report_timestamp_seconds},
 *       {@code pidpool_usage_scan_seconds}, {@code pidpool_usage_scans_total}</td><td>the report</td></tr>
 *   <tr><td>{@code pidpool_server_leader}, {@code pidpool_server_epoch}, {@code pidpool_server_held_pids}</td>
 *       <td>this server</td></tr>
 *   <tr><td>{@code pidpool_usage_sync_passes_total}, {@code pidpool_usage_sync_recorded_total},
 *       {@code pidpool_usage_sync_attention_total}</td><td>the ledger sync of this server</td></tr>
 * </table>
 *
 * <p>The per-PID families are written as text by this class ({@link #renderPids}), not registered as
 * meters: 100,000 PIDs would be 500,000 Micrometer meters. Usage gauges are refreshed at scrape time from {@link UsageReports#current()} (a follower scans
 * on demand, at most once per scan interval, so every server exports the same figures), falling back
 * to the latest report when a scan fails. Utilisation of a PID with quota 0 that was used is {@code
 * +Inf}. Money is exported as a double (Prometheus has no decimals); {@code /api/v1/usage} has the
 * exact figures.
 *
 * <p>Concurrency: {@link #scrape()} may be called from several HTTP threads; refreshing the
 * multi-gauges is synchronized, and a report is applied once.
 */
public final class UsageMetrics {
    private static final Logger LOG = LoggerFactory.getLogger(UsageMetrics.class);

    /** What the server gauges read. */
    public interface ServerState {
        boolean isLeader();

        /** The epoch of this server's term, 0 when it does not lead. */
        long epoch();

        /** PIDs held by live instances, over all modules (as this server's view sees them). */
        long heldPids();
    }

    private final PrometheusMeterRegistry registry;
    private final UsageReports reports;
    private final ServerState server;
    private final AtomicReference<PidSeries> pidSeries = new AtomicReference<>();
    private final List<Bound<ModuleProjection>> moduleGauges = new ArrayList<>();
    private final AtomicReference<UsageReport> applied = new AtomicReference<>();
    private final AtomicLong held = new AtomicLong();

    private record Bound<T>(MultiGauge gauge, ToDoubleFunction<T> value) {}

    /** The per-PID families of one report, rendered once. */
    private record PidSeries(UsageReport report, String text) {}

    /** Per-PID families: name suffix, help, value. */
    private static final List<PidFamily> PID_FAMILIES = List.of(
            new PidFamily("used", "commands used this month, net of refunds", p -> Long.toString(p.used())),
            new PidFamily("remaining", "commands left before overage", p -> Long.toString(p.remaining())),
            new PidFamily("utilisation", "used / monthly quota", p -> number(p.utilisation())),
            new PidFamily("projected_used", "projected usage at month end", p -> Long.toString(p.projectedUsed())),
            new PidFamily("projected_overage_cost", "projected overage cost at month end", p -> p.projectedOverageCost()
                    .toPlainString()));

    private record PidFamily(String name, String help, java.util.function.Function<PidProjection, String> value) {}

    /**
     * @param monitor scan statistics (may be null: not exported)
     * @param sync the ledger sync's counters (null when this server does not sync)
     */
    public UsageMetrics(UsageReports reports, ServerState server, UsageMonitor monitor, UsageSyncService sync) {
        this(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), reports, server, monitor, sync);
    }

    /** In a registry of the caller's, which may hold other meters (the server's JVM, HTTP, pool meters). */
    public UsageMetrics(
            PrometheusMeterRegistry registry,
            UsageReports reports,
            ServerState server,
            UsageMonitor monitor,
            UsageSyncService sync) {
        this.registry = requireNonNull(registry, "registry");
        this.reports = requireNonNull(reports, "reports");
        this.server = requireNonNull(server, "server");
        module("used", "commands used this month by the module's PIDs", m -> m.used());
        module("remaining", "quota left before overage over the module's ACTIVE PIDs", m -> m.remaining());
        module("utilisation", "used / quota over the module's PIDs", ModuleProjection::utilisation);
        module("projected.used", "projected usage at month end", m -> m.projectedUsed());
        module("projected.overage.cost", "projected overage cost at month end", m -> m.projectedOverageCost()
                .doubleValue());
        Gauge.builder(
                        "pidpool.usage.projected.overage.cost",
                        applied,
                        r -> r.get() == null
                                ? Double.NaN
                                : r.get().totalProjectedOverageCost().doubleValue())
                .description("the cluster's projected overage cost at month end")
                .register(registry);
        Gauge.builder(
                        "pidpool.usage.report.timestamp",
                        applied,
                        r -> r.get() == null ? Double.NaN : r.get().at().toEpochMilli() / 1000.0)
                .baseUnit("seconds")
                .description("when the exported usage report was taken")
                .register(registry);
        Gauge.builder("pidpool.server.leader", server, s -> s.isLeader() ? 1 : 0)
                .description("1 if this server leads the cluster")
                .register(registry);
        Gauge.builder("pidpool.server.epoch", server, s -> s.epoch())
                .description("the epoch of this server's term (0 when not leading)")
                .register(registry);
        Gauge.builder("pidpool.server.held.pids", held, AtomicLong::get)
                .description("PIDs held by live instances, as this server sees them")
                .register(registry);
        if (monitor != null) {
            Gauge.builder("pidpool.usage.scan", monitor, m -> m.lastScan()
                            .map(s -> s.total().toNanos() / 1e9)
                            .orElse(Double.NaN))
                    .baseUnit("seconds")
                    .description("duration of this server's last full usage scan")
                    .register(registry);
            FunctionCounter.builder("pidpool.usage.scans", monitor, UsageMonitor::scans)
                    .description("full usage scans run by this server")
                    .register(registry);
        }
        if (sync != null) {
            FunctionCounter.builder("pidpool.usage.sync.passes", sync, UsageSyncService::passes)
                    .description("usage ledger sync passes run by this server")
                    .register(registry);
            FunctionCounter.builder("pidpool.usage.sync.recorded", sync, UsageSyncService::recorded)
                    .description("deductions and refunds this server wrote to the database ledger")
                    .register(registry);
            FunctionCounter.builder("pidpool.usage.sync.attention", sync, UsageSyncService::passesNeedingAttention)
                    .description("sync passes with unfillable gaps, orphans or a lost sequence hash")
                    .register(registry);
        }
    }

    /**
     * The per-PID families in Prometheus text, written directly rather than as one Micrometer meter
     * per PID and figure: at 100,000 PIDs that was 500,000 meters and 15 s per scrape
     * (docs/benchmarks-quota.md). Rendered once per report.
     */
    static String renderPids(UsageReport report) {
        StringBuilder out = new StringBuilder(report.pids().size() * PID_FAMILIES.size() * 70);
        for (PidFamily family : PID_FAMILIES) {
            String name = "pidpool_pid_" + family.name();
            out.append("# HELP ").append(name).append(' ').append(family.help()).append('\n');
            out.append("# TYPE ").append(name).append(" gauge\n");
            for (PidProjection p : report.pids()) {
                out.append(name).append("{module=\"");
                escape(out, p.module().toString());
                out.append("\",pid=\"");
                escape(out, p.id());
                out.append("\"} ").append(family.value().apply(p)).append('\n');
            }
        }
        return out.toString();
    }

    private static void escape(StringBuilder out, String label) {
        for (int i = 0; i < label.length(); i++) {
            char c = label.charAt(i);
            switch (c) {
                case '\\' -> out.append("\\\\");
                case '"' -> out.append("\\\"");
                case '\n' -> out.append("\\n");
                default -> out.append(c);
            }
        }
    }

    private static String number(double value) {
        if (Double.isNaN(value)) {
            return "NaN";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "+Inf" : "-Inf";
        }
        return Double.toString(value);
    }

    private void module(String name, String description, ToDoubleFunction<ModuleProjection> value) {
        MultiGauge gauge = MultiGauge.builder("pidpool.module." + name)
                .description(description)
                .register(registry);
        moduleGauges.add(new Bound<>(gauge, value));
    }

    /** The registry, for other components' meters (e.g. the worker's). */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Refreshes the gauges and answers the registry and the per-PID families in Prometheus text format. */
    public String scrape() {
        refresh();
        PidSeries pids = pidSeries.get();
        String meters = registry.scrape();
        return pids == null ? meters : meters + pids.text();
    }

    /** Applies the current report (see the class comment) and reads the held-PID count. */
    public void refresh() {
        try {
            held.set(server.heldPids());
        } catch (PidPoolException | IllegalStateException e) {
            LOG.debug("metrics: held PIDs unavailable: {}", e.getMessage());
        }
        Optional<UsageReport> report;
        try {
            report = Optional.of(reports.current());
        } catch (PidPoolException e) {
            LOG.debug("metrics: no fresh usage report ({}); exporting the latest", e.getMessage());
            report = reports.latest();
        }
        report.ifPresent(this::apply);
    }

    private synchronized void apply(UsageReport report) {
        if (applied.get() == report) {
            return;
        }
        pidSeries.set(new PidSeries(report, renderPids(report)));
        for (Bound<ModuleProjection> bound : moduleGauges) {
            List<MultiGauge.Row<?>> rows = new ArrayList<>(report.modules().size());
            for (ModuleProjection m : report.modules()) {
                rows.add(MultiGauge.Row.of(
                        Tags.of("module", m.key().toString()), bound.value().applyAsDouble(m)));
            }
            bound.gauge().register(rows, true);
        }
        applied.set(report);
    }
}
