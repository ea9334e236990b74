package io.pidpool.server.http;

import io.pidpool.core.port.StorageLimits;
import io.pidpool.server.config.Role.Access;
import java.util.Objects;

/** {@code GET /api/v1/audit?limit=}: the newest audit entries, for admins only. */
final class AuditRoutes implements ApiRoutes {
    static final int DEFAULT_LIMIT = 100;

    private final OperatorApi api;

    AuditRoutes(OperatorApi api) {
        this.api = Objects.requireNonNull(api, "api");
    }

    @Override
    public void register(Routes routes) {
        routes.get("/api/v1/audit", Access.ADMIN, ctx -> {
            int limit = Params.limit(ctx, "limit", DEFAULT_LIMIT, StorageLimits.MAX_PAGE);
            Routes.answer(
                    ctx,
                    200,
                    new ApiJson.Audit(
                            api.audit(limit).stream().map(ApiJson.AuditView::of).toList()));
        });
    }
}
