package io.pidpool.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.security.RouteRole;
import io.pidpool.core.advice.ModuleEffect;
import io.pidpool.core.advice.Recommendation;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.server.advice.AdviceApi;
import io.pidpool.server.advice.AlertView;
import java.time.Instant;
import java.util.List;

/**
 * {@code GET /api/v1/alerts} and {@code GET /api/v1/recommendations} (docs/alerts.md), registered by
 * {@link HttpApi#advice}. Read access; errors go through {@code HttpApi}'s one error mapper.
 *
 * <ul>
 *   <li>{@code GET /api/v1/alerts}: open alerts, oldest first. {@code ?state=all} lists alerts of any
 *       state, newest first, at most {@code ?limit=} (1..10000, default 100).
 *   <li>{@code GET /api/v1/recommendations}: proposed moves with their explanation and cost delta;
 *       503 while no usage report exists yet.
 * </ul>
 *
 * Money is written as decimal strings (exact, no binary floating point).
 */
final class AdviceRoutes {
    static final int DEFAULT_LIMIT = 100;

    private AdviceRoutes() {}

    record Alerts(String state, List<AlertView> alerts) {}

    record Module(
            String module,
            int activePidsBefore,
            int activePidsAfter,
            long remainingBefore,
            long remainingAfter,
            long futureDemand,
            long slackBefore,
            long shortfallBefore,
            String costBefore,
            String costAfter) {
        static Module of(ModuleEffect e) {
            return new Module(
                    e.module().toString(),
                    e.activePidsBefore(),
                    e.activePidsAfter(),
                    e.remainingBefore(),
                    e.remainingAfter(),
                    e.futureDemand(),
                    e.slackBefore(),
                    e.shortfallBefore(),
                    e.costBefore().toPlainString(),
                    e.costAfter().toPlainString());
        }
    }

    record Move(
            Module source,
            Module target,
            List<String> pids,
            long movedRemaining,
            String totalCostBefore,
            String totalCostAfter,
            String costDelta,
            String standaloneDelta,
            String explanation) {
        static Move of(Recommendation r) {
            return new Move(
                    Module.of(r.source()),
                    Module.of(r.target()),
                    r.pidIds(),
                    r.movedRemaining(),
                    r.totalCostBefore().toPlainString(),
                    r.totalCostAfter().toPlainString(),
                    r.delta().toPlainString(),
                    r.standaloneDelta().toPlainString(),
                    r.explanation());
        }
    }

    record RecommendationList(
            String month,
            Instant at,
            String costBefore,
            String costAfter,
            String saving,
            int moves,
            boolean moveLimitReached,
            List<Move> recommendations) {
        static RecommendationList of(Recommendations r) {
            return new RecommendationList(
                    r.month().toString(),
                    r.at(),
                    r.costBefore().toPlainString(),
                    r.costAfter().toPlainString(),
                    r.saving().toPlainString(),
                    r.moves(),
                    r.moveLimitReached(),
                    r.recommendations().stream().map(Move::of).toList());
        }
    }

    static void register(Javalin app, AdviceApi advice, RouteRole read) {
        app.get("/api/v1/alerts", ctx -> answer(ctx, alerts(ctx, advice)), read);
        app.get(
                "/api/v1/recommendations",
                ctx -> answer(
                        ctx,
                        RecommendationList.of(advice.recommendations()
                                .orElseThrow(() -> PidPoolException.unavailable(
                                        "no usage report yet: recommendations need one; try again shortly", null)))),
                read);
    }

    private static Alerts alerts(Context ctx, AdviceApi advice) {
        String state = ctx.queryParam("state");
        String limitText = ctx.queryParam("limit");
        int limit = DEFAULT_LIMIT;
        if (limitText != null) {
            long n;
            try {
                n = Long.parseLong(limitText);
            } catch (NumberFormatException e) {
                throw PidPoolException.invalid("limit", "limit must be an integer, was '%s'", limitText);
            }
            if (n < 1 || n > StorageLimits.MAX_PAGE) {
                throw PidPoolException.invalid(
                        "limit", "limit must be within 1..%d, was %d", StorageLimits.MAX_PAGE, n);
            }
            limit = (int) n;
        }
        List<StoredAlert> list;
        if (state == null || state.equals("open")) {
            list = advice.openAlerts();
            list = list.subList(0, Math.min(limit, list.size()));
            state = "open";
        } else if (state.equals("all")) {
            list = advice.recentAlerts(limit);
        } else {
            throw PidPoolException.invalid("state", "state must be open or all, was '%s'", state);
        }
        return new Alerts(state, list.stream().map(AlertView::of).toList());
    }

    private static void answer(Context ctx, Object body) {
        try {
            ctx.status(200).contentType("application/json").result(ApiJson.MAPPER.writeValueAsBytes(body));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("response is not JSON", e);
        }
    }
}
