package io.pidpool.server.http;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.javalin.http.Context;
import io.pidpool.core.advice.ModuleProjection;
import io.pidpool.core.advice.PidProjection;
import io.pidpool.core.advice.UsageReport;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.server.config.Role.Access;
import io.pidpool.server.usage.UsageMetrics;
import io.pidpool.server.usage.UsageReports;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * {@code GET /metrics} (Prometheus text from {@link UsageMetrics}; public unless {@code
 * http.metricsRequireToken}) and {@code GET /api/v1/usage?module=&limit=&after=} (per-module and
 * per-PID used, remaining, utilisation, projected month-end usage and overage cost, exact, from
 * {@link UsageReports#current()}: any server answers). An unknown module is 404, a malformed one 400
 * ({@code field: module}).
 *
 * <p>Concurrency: stateless; handlers run on Jetty's threads.
 */
public final class UsageRoutes implements ApiRoutes {
    static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
    public static final int DEFAULT_LIMIT = 10_000;
    public static final int MAX_LIMIT = 100_000;

    private final UsageReports reports;
    private final UsageMetrics metrics;

    public UsageRoutes(UsageReports reports, UsageMetrics metrics) {
        this.reports = requireNonNull(reports, "reports");
        this.metrics = requireNonNull(metrics, "metrics");
    }

    @Override
    public void register(Routes routes) {
        routes.metrics("/metrics", this::metrics);
        routes.get("/api/v1/usage", Access.READ, this::usage);
    }

    private void metrics(Context ctx) {
        ctx.status(200).contentType(PROMETHEUS_TEXT).result(metrics.scrape().getBytes(StandardCharsets.UTF_8));
    }

    // ---------------------------------------------------------------- /api/v1/usage

    /** One module's figures. {@code utilisation} is null when the quota is 0 and something was used. */
    public record ModuleJson(
            String module,
            int pids,
            int activePids,
            long quota,
            long used,
            long remaining,
            Double utilisation,
            long futureDemand,
            long projectedUsed,
            long projectedOverage,
            BigDecimal projectedOverageCost,
            boolean usageEstimated) {
        static ModuleJson of(ModuleProjection m) {
            return new ModuleJson(
                    m.key().toString(),
                    m.pids(),
                    m.activePids(),
                    m.quota(),
                    m.used(),
                    m.remaining(),
                    finite(m.utilisation()),
                    m.futureDemand(),
                    m.projectedUsed(),
                    m.projectedOverage(),
                    m.projectedOverageCost(),
                    m.usageEstimated());
        }
    }

    /** One PID's figures. */
    public record PidJson(
            String id,
            String module,
            String status,
            long monthlyQuota,
            long overageAllowance,
            long used,
            long remaining,
            Double utilisation,
            long projectedUsed,
            long projectedOverage,
            BigDecimal projectedOverageCost) {
        static PidJson of(PidProjection p) {
            return new PidJson(
                    p.id(),
                    p.module().toString(),
                    p.status().name(),
                    p.monthlyQuota(),
                    p.overageAllowance(),
                    p.used(),
                    p.remaining(),
                    finite(p.utilisation()),
                    p.projectedUsed(),
                    p.projectedOverage(),
                    p.projectedOverageCost());
        }
    }

    /**
     * The answer. {@code next} is the {@code after} of the next page of PIDs, null on the last.
     *
     * @param totalUsed over the modules answered
     * @param projectedOverageCost over the modules answered
     */
    public record UsageJson(
            Instant at,
            String month,
            long totalUsed,
            long projectedOverage,
            BigDecimal projectedOverageCost,
            List<ModuleJson> modules,
            List<PidJson> pids,
            String next) {}

    private void usage(Context ctx) {
        ModuleKey module = moduleParam(ctx.queryParam("module"));
        int limit = limitParam(ctx.queryParam("limit"));
        String after = ctx.queryParam("after");
        if (after != null) {
            Names.requirePidId(after, "after");
        }
        UsageReport report = reports.current();
        List<ModuleProjection> modules;
        if (module == null) {
            modules = report.modules();
        } else {
            modules = List.of(report.module(module)
                    .orElseThrow(() -> PidPoolException.notFound("module", "no module %s", module)));
        }
        long used = 0;
        long overage = 0;
        BigDecimal cost = BigDecimal.ZERO;
        List<ModuleJson> moduleJson = new ArrayList<>(modules.size());
        for (ModuleProjection m : modules) {
            moduleJson.add(ModuleJson.of(m));
            used += m.used();
            overage += m.projectedOverage();
            cost = cost.add(m.projectedOverageCost());
        }
        List<PidProjection> pids = new ArrayList<>();
        for (PidProjection p : report.pids()) {
            if ((module == null || p.module().equals(module)) && (after == null || p.id().compareTo(after) > 0)) {
                pids.add(p);
            }
        }
        pids.sort(Comparator.comparing(PidProjection::id));
        String next = null;
        if (pids.size() > limit) {
            pids = pids.subList(0, limit);
            next = pids.get(limit - 1).id();
        }
        List<PidJson> pidJson = new ArrayList<>(pids.size());
        pids.forEach(p -> pidJson.add(PidJson.of(p)));
        UsageJson body =
                new UsageJson(report.at(), report.month().key(), used, overage, cost, moduleJson, pidJson, next);
        byte[] bytes;
        try {
            bytes = ApiJson.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("usage answer is not JSON", e);
        }
        ctx.status(200).contentType("application/json").result(bytes);
    }

    private static ModuleKey moduleParam(String text) {
        if (text == null) {
            return null;
        }
        try {
            return ModuleKey.parse(text);
        } catch (PidPoolException e) {
            throw PidPoolException.invalid("module", "%s", e.getMessage());
        }
    }

    private static int limitParam(String text) {
        if (text == null) {
            return DEFAULT_LIMIT;
        }
        long n;
        try {
            n = Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid("limit", "limit must be an integer, was '%s'", text);
        }
        if (n < 1 || n > MAX_LIMIT) {
            throw PidPoolException.invalid("limit", "limit must be within 1..%d, was %d", MAX_LIMIT, n);
        }
        return (int) n;
    }

    private static Double finite(double value) {
        return Double.isFinite(value) ? value : null;
    }
}
