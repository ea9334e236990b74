package io.pidpool.server.http;

import io.pidpool.server.config.Role.Access;
import java.util.Objects;

/** {@code GET /health} (public) and {@code GET /api/v1/cluster}. */
final class ClusterRoutes implements ApiRoutes {
    private final OperatorApi api;
    private final HealthCheck health;

    ClusterRoutes(OperatorApi api, HealthCheck health) {
        this.api = Objects.requireNonNull(api, "api");
        this.health = Objects.requireNonNull(health, "health");
    }

    @Override
    public void register(Routes routes) {
        routes.getPublic("/health", ctx -> {
            HealthCheck.Report report = health.report();
            Routes.answer(ctx, report.status() == HealthCheck.Status.UP ? 200 : 503, report);
        });
        routes.get("/api/v1/cluster", Access.READ, ctx -> {
            OperatorApi.ClusterView view = api.cluster();
            Routes.answer(
                    ctx,
                    200,
                    new ApiJson.Cluster(
                            view.cluster(),
                            view.self(),
                            view.leader(),
                            view.epoch(),
                            view.members(),
                            health.report(),
                            ApiJson.You.of(Routes.principal(ctx))));
        });
    }
}
