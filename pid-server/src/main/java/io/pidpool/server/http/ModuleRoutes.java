package io.pidpool.server.http;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.server.config.Role.Access;
import java.util.List;
import java.util.Objects;

/** {@code GET /api/v1/modules[/{module}]} and {@code PUT /api/v1/modules/{module}}. */
final class ModuleRoutes implements ApiRoutes {
    private final OperatorApi api;
    private final BatchRoutes batches;

    ModuleRoutes(OperatorApi api, BatchRoutes batches) {
        this.api = Objects.requireNonNull(api, "api");
        this.batches = Objects.requireNonNull(batches, "batches");
    }

    @Override
    public void register(Routes routes) {
        routes.get("/api/v1/modules", Access.READ, ctx -> Routes.answer(ctx, 200, new ApiJson.Modules(api.modules())));
        routes.get("/api/v1/modules/{module}", Access.READ, ctx -> {
            ModuleKey module = Params.moduleKey(ctx.pathParam("module"), "module");
            Routes.answer(
                    ctx,
                    200,
                    api.module(module).orElseThrow(() -> PidPoolException.notFound("module", "no module %s", module)));
        });
        routes.put("/api/v1/modules/{module}", Access.WRITE, ctx -> {
            ModuleKey module = Params.moduleKey(ctx.pathParam("module"), "module");
            BatchRoutes.WaitSpec wait = BatchRoutes.waitSpec(ctx);
            Operation<String> op = RequestParser.moduleSettings(module, routes.readJson(ctx));
            batches.submitAndAnswer(ctx, List.of(op), wait);
        });
    }
}
