package io.pidpool.server.http;

import io.javalin.http.Context;
import io.pidpool.core.advice.ModuleEffect;
import io.pidpool.core.advice.Recommendation;
import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.server.advice.AdviceApi;
import io.pidpool.server.advice.AlertView;
import io.pidpool.server.config.Role.Access;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * {@code GET /api/v1/alerts} and {@code GET /api/v1/recommendations} (docs/alerts.md), registered by
 * {@link HttpApi#advice}. Read access; errors go through {@code HttpApi}'s one error mapper.
 *
 * <ul>
 *   <li>{@code GET /api/v1/alerts}: open alerts, oldest first. {@code ?state=all} lists alerts of any
 *       state, newest first, at most {@code ?limit=} (1..10000, default 100).
 *   <li>{@code GET /api/v1/recommendations}: proposed moves with their explanation and cost delta;
 *       503 while no usage report exists yet.
 *   <li>{@code POST /api/v1/alerts/{id}/ack} (operator): acknowledges an open alert (audited); 404
 *       for an unknown id, 409 for a resolved alert; acknowledging again keeps the first.
 * </ul>
 *
 * Money is written as decimal strings (exact, no binary floating point).
 */
final class AdviceRoutes implements ApiRoutes {
    static final int DEFAULT_LIMIT = 100;

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

    private final AdviceApi advice;

    AdviceRoutes(AdviceApi advice) {
        this.advice = Objects.requireNonNull(advice, "advice");
    }

    @Override
    public void register(Routes routes) {
        routes.get("/api/v1/alerts", Access.READ, ctx -> Routes.answer(ctx, 200, alerts(ctx, advice)));
        routes.post("/api/v1/alerts/{id}/ack", Access.WRITE, ctx -> {
            long id = Params.longValue(ctx.pathParam("id"), "id");
            Routes.answer(
                    ctx,
                    200,
                    AlertView.of(advice.acknowledge(id, Routes.principal(ctx).name())));
        });
        routes.get(
                "/api/v1/recommendations",
                Access.READ,
                ctx -> Routes.answer(
                        ctx,
                        200,
                        RecommendationList.of(advice.recommendations()
                                .orElseThrow(() -> PidPoolException.unavailable(
                                        "no usage report yet: recommendations need one; try again shortly", null)))));
    }

    private static Alerts alerts(Context ctx, AdviceApi advice) {
        String state = ctx.queryParam("state");
        int limit = Params.limit(ctx, "limit", DEFAULT_LIMIT, StorageLimits.MAX_PAGE);
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
}
