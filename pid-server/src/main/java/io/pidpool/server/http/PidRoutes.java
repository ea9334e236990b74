package io.pidpool.server.http;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidState;
import io.pidpool.server.config.Role.Access;
import java.util.Objects;

/**
 * {@code GET /api/v1/pids?module=&state=&status=&after=&limit=} and {@code GET /api/v1/pids/{id}}
 * (one PID with its attributes; never its secret, sealed or not).
 */
final class PidRoutes implements ApiRoutes {
    private final OperatorApi api;

    PidRoutes(OperatorApi api) {
        this.api = Objects.requireNonNull(api, "api");
    }

    @Override
    public void register(Routes routes) {
        routes.get("/api/v1/pids", Access.READ, ctx -> {
            String module = ctx.queryParam("module");
            String state = ctx.queryParam("state");
            String status = ctx.queryParam("status");
            String after = ctx.queryParam("after");
            var query = new OperatorApi.PidQuery(
                    module == null ? null : Params.moduleKey(module, "module"),
                    state == null ? null : Params.enumValue(PidState.class, state, "state"),
                    status == null ? null : Params.enumValue(PidAvailability.class, status, "status"),
                    after == null ? null : Names.requirePidId(after, "after"),
                    Params.limit(ctx, "limit", OperatorApi.PidQuery.DEFAULT_LIMIT, OperatorApi.PidQuery.MAX_LIMIT));
            Routes.answer(ctx, 200, api.pids(query));
        });
        routes.get("/api/v1/pids/{id}", Access.READ, ctx -> {
            String id = Names.requirePidId(ctx.pathParam("id"), "id");
            Routes.answer(ctx, 200, api.pid(id).orElseThrow(() -> PidPoolException.notFound("id", "no PID %s", id)));
        });
    }
}
