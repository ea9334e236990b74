package io.pidpool.server.config;

import io.pidpool.core.advice.AlertPolicy;
import io.pidpool.core.advice.RecommenderPolicy;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Operation;
import io.pidpool.core.quota.OverageTariff;
import io.pidpool.server.config.ConfigException.Problem;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Monitoring and advice ({@code docs/alerts.md}): alert thresholds, the webhook, the
 * overage tariff, recommendations and their automatic application. Under {@code advice:} in
 * {@code server.yml}; every key also as {@code PIDPOOL_ADVICE_*}.
 *
 * @param evaluateIntervalMs how often the leader evaluates the alert rules and the recommender on the
 *     latest usage report
 * @param utilisationPercents utilisation thresholds in percent of the monthly quota (1..1000)
 * @param pidUtilisation whether utilisation is also alerted per PID (always per module)
 * @param projectedCostAbove a module's projected overage cost above this raises PROJECTED_OVERAGE
 * @param maxPidAlerts the most PID alerts open at once (the rest are counted in one alert)
 * @param cooldownAfterFailures login failures/conflicts after which the leader cools a PID down
 *     (and alerts)
 * @param cooldownMs how long a cooled-down PID is not assigned
 * @param massFailureShare the mass-failure brake engages (and alerts) when more than this share of a
 *     module's instances fail within a minute (modules of 3 or more; a graceful close is not a
 *     failure); 1.0 disables it
 * @param tariff the overage price tiers, cheapest first or not; empty = overage is free (no cost
 *     alerts, no recommendations)
 * @param rebalanceDelayMs how long the leader keeps a departed instance's share for a replacement
 *     before spreading it over the live instances, for modules that set no delay of their own
 *     ({@code PUT /api/v1/modules/{module}} {@code rebalanceDelayMs}); 0..86400000
 */
public record AdviceConfig(
        long evaluateIntervalMs,
        List<Integer> utilisationPercents,
        boolean pidUtilisation,
        BigDecimal projectedCostAbove,
        int maxPidAlerts,
        int cooldownAfterFailures,
        long cooldownMs,
        double massFailureShare,
        List<TariffTier> tariff,
        WebhookConfig webhook,
        RecommendationsConfig recommendations,
        AutoApplyConfig autoApply,
        long rebalanceDelayMs) {

    /** The default rebalance delay: one minute. */
    public static final long DEFAULT_REBALANCE_DELAY_MS = 60_000;

    /** With the default rebalance delay. */
    public AdviceConfig(
            long evaluateIntervalMs,
            List<Integer> utilisationPercents,
            boolean pidUtilisation,
            BigDecimal projectedCostAbove,
            int maxPidAlerts,
            int cooldownAfterFailures,
            long cooldownMs,
            double massFailureShare,
            List<TariffTier> tariff,
            WebhookConfig webhook,
            RecommendationsConfig recommendations,
            AutoApplyConfig autoApply) {
        this(
                evaluateIntervalMs,
                utilisationPercents,
                pidUtilisation,
                projectedCostAbove,
                maxPidAlerts,
                cooldownAfterFailures,
                cooldownMs,
                massFailureShare,
                tariff,
                webhook,
                recommendations,
                autoApply,
                DEFAULT_REBALANCE_DELAY_MS);
    }

    /**
     * One tier of the overage tariff.
     *
     * @param size commands in this tier; null or absent for the last, unbounded tier
     * @param unitPrice price per command above quota in this tier
     */
    public record TariffTier(Long size, BigDecimal unitPrice) {}

    /**
     * POST every raised and resolved alert as JSON, through pid-worker tasks with retries.
     *
     * @param url {@code http(s)://...}; empty = no webhook
     * @param maxAttempts attempts per notification before its task ends FAILED (1..100)
     * @param timeoutMs connect and request timeout of one attempt
     */
    public record WebhookConfig(String url, int maxAttempts, long timeoutMs) {}

    /**
     * @param maxMoves the most PIDs one recommender run proposes to move
     * @param minSavingPerMove a move must save more than this
     */
    public record RecommendationsConfig(int maxMoves, BigDecimal minSavingPerMove) {}

    /**
     * Applying recommendations without an operator, as audited MIGRATE batches.
     *
     * @param enabled off by default
     * @param maxMovesPerInterval the most PIDs moved per {@code intervalMs}
     * @param intervalMs the throttle's window
     * @param onEstimatedUsage apply even while a module's usage is estimated from its current PIDs
     *     (see docs/advice.md §1: moves then feed back into the estimate); off by default
     */
    public record AutoApplyConfig(
            boolean enabled, int maxMovesPerInterval, long intervalMs, boolean onEstimatedUsage) {}

    /** The built-in defaults (the same as {@code server-defaults.yml}). */
    public static AdviceConfig defaults() {
        return new AdviceConfig(
                60_000,
                List.of(80, 100),
                true,
                BigDecimal.ZERO,
                1000,
                3,
                600_000,
                0.5,
                List.of(),
                new WebhookConfig("", 10, 5_000),
                new RecommendationsConfig(100, BigDecimal.ZERO),
                new AutoApplyConfig(false, 20, 600_000, false),
                DEFAULT_REBALANCE_DELAY_MS);
    }

    public Duration rebalanceDelay() {
        return Duration.ofMillis(rebalanceDelayMs);
    }

    /** The alert rules' thresholds. */
    public AlertPolicy alertPolicy() {
        return new AlertPolicy(utilisationPercents, pidUtilisation, projectedCostAbove, maxPidAlerts);
    }

    public RecommenderPolicy recommenderPolicy() {
        return RecommenderPolicy.defaults()
                .withMaxMoves(recommendations.maxMoves())
                .withMinSavingPerMove(recommendations.minSavingPerMove());
    }

    public OverageTariff overageTariff() {
        if (tariff.isEmpty()) {
            return OverageTariff.free();
        }
        List<OverageTariff.Tier> tiers = new ArrayList<>();
        for (TariffTier t : tariff) {
            tiers.add(
                    new OverageTariff.Tier(t.size() == null ? OverageTariff.Tier.UNBOUNDED : t.size(), t.unitPrice()));
        }
        return OverageTariff.of(tiers);
    }

    public Duration evaluateInterval() {
        return Duration.ofMillis(evaluateIntervalMs);
    }

    public Duration cooldown() {
        return Duration.ofMillis(cooldownMs);
    }

    /** What is wrong with {@code c}, key by key (empty when valid). */
    static List<Problem> problems(AdviceConfig c) {
        List<Problem> problems = new ArrayList<>();
        if (c == null) {
            problems.add(new Problem("advice", "is required"));
            return problems;
        }
        check(
                problems,
                c.evaluateIntervalMs >= 100 && c.evaluateIntervalMs <= 86_400_000L,
                "advice.evaluateIntervalMs",
                "must be within 100..86400000, was " + c.evaluateIntervalMs);
        if (c.utilisationPercents == null || c.projectedCostAbove == null) {
            check(problems, c.utilisationPercents != null, "advice.utilisationPercents", "is required (may be [])");
            check(problems, c.projectedCostAbove != null, "advice.projectedCostAbove", "is required");
        } else {
            try {
                c.alertPolicy();
            } catch (PidPoolException e) {
                String field = e.field() == null ? "utilisationPercents" : e.field();
                problems.add(new Problem("advice." + field, e.getMessage()));
            }
        }
        check(
                problems,
                c.cooldownAfterFailures >= 1 && c.cooldownAfterFailures <= 1000,
                "advice.cooldownAfterFailures",
                "must be within 1..1000, was " + c.cooldownAfterFailures);
        check(
                problems,
                c.cooldownMs >= 1000 && c.cooldownMs <= 30L * 86_400_000L,
                "advice.cooldownMs",
                "must be within 1000..2592000000, was " + c.cooldownMs);
        check(
                problems,
                c.massFailureShare > 0 && c.massFailureShare <= 1,
                "advice.massFailureShare",
                "must be within (0, 1] (1 disables the brake), was " + c.massFailureShare);
        check(
                problems,
                c.rebalanceDelayMs >= 0
                        && c.rebalanceDelayMs <= io.pidpool.core.model.ModuleConfig.MAX_REBALANCE_DELAY.toMillis(),
                "advice.rebalanceDelayMs",
                "must be within 0..86400000, was " + c.rebalanceDelayMs);
        if (c.tariff == null) {
            problems.add(new Problem("advice.tariff", "is required (may be [])"));
        } else {
            for (int i = 0; i < c.tariff.size(); i++) {
                TariffTier t = c.tariff.get(i);
                String at = "advice.tariff[" + i + "]";
                if (t == null || t.unitPrice() == null) {
                    problems.add(new Problem(at + ".unitPrice", "is required"));
                } else if (t.size() == null && i != c.tariff.size() - 1) {
                    problems.add(new Problem(at + ".size", "is required on every tier but the last"));
                }
            }
            if (problems.stream().noneMatch(p -> p.key().startsWith("advice.tariff"))) {
                try {
                    c.overageTariff();
                } catch (PidPoolException e) {
                    problems.add(new Problem("advice.tariff", e.getMessage()));
                }
            }
        }
        WebhookConfig w = c.webhook;
        if (w == null) {
            problems.add(new Problem("advice.webhook", "is required"));
        } else {
            if (w.url() == null) {
                problems.add(new Problem("advice.webhook.url", "must be text (empty for none)"));
            } else if (!w.url().isEmpty()) {
                check(
                        problems,
                        isHttpUrl(w.url()),
                        "advice.webhook.url",
                        "must be an http:// or https:// url with a host (not repeated: it may carry a token)");
            }
            check(
                    problems,
                    w.maxAttempts() >= 1 && w.maxAttempts() <= 100,
                    "advice.webhook.maxAttempts",
                    "must be within 1..100, was " + w.maxAttempts());
            check(
                    problems,
                    w.timeoutMs() >= 100 && w.timeoutMs() <= 600_000,
                    "advice.webhook.timeoutMs",
                    "must be within 100..600000, was " + w.timeoutMs());
        }
        RecommendationsConfig r = c.recommendations;
        if (r == null) {
            problems.add(new Problem("advice.recommendations", "is required"));
        } else {
            check(
                    problems,
                    r.maxMoves() >= 1 && r.maxMoves() <= Operation.MAX_PIDS,
                    "advice.recommendations.maxMoves",
                    "must be within 1.." + Operation.MAX_PIDS + ", was " + r.maxMoves());
            check(
                    problems,
                    r.minSavingPerMove() != null && r.minSavingPerMove().signum() >= 0,
                    "advice.recommendations.minSavingPerMove",
                    "must be >= 0");
        }
        AutoApplyConfig a = c.autoApply;
        if (a == null) {
            problems.add(new Problem("advice.autoApply", "is required"));
        } else {
            check(
                    problems,
                    a.maxMovesPerInterval() >= 1 && a.maxMovesPerInterval() <= Operation.MAX_PIDS,
                    "advice.autoApply.maxMovesPerInterval",
                    "must be within 1.." + Operation.MAX_PIDS + ", was " + a.maxMovesPerInterval());
            check(
                    problems,
                    a.intervalMs() >= 100 && a.intervalMs() <= 31L * 86_400_000L,
                    "advice.autoApply.intervalMs",
                    "must be within 100..2678400000, was " + a.intervalMs());
        }
        return problems;
    }

    private static boolean isHttpUrl(String url) {
        try {
            URI uri = URI.create(url);
            return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static void check(List<Problem> problems, boolean ok, String key, String message) {
        if (!ok) {
            problems.add(new Problem(key, message));
        }
    }
}
