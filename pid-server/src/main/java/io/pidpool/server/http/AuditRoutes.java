package io.pidpool.server.http;

import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.StorageLimits;
import io.pidpool.server.config.Role.Access;
import java.util.List;
import java.util.Objects;

/**
 * {@code GET /api/v1/audit?limit=&before=}: the newest audit entries, for admins only, one page at
 * a time: {@code next} is the {@code before} of the following page ({@code null} on the last).
 */
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
            String before = ctx.queryParam("before");
            // one more than asked tells whether a next page exists (at the largest limit, a full page
            // gets a next, which may then be empty)
            int fetch = Math.min(limit + 1, StorageLimits.MAX_PAGE);
            List<AuditEntry> page =
                    before == null ? api.audit(fetch) : api.auditBefore(Params.longValue(before, "before"), fetch);
            boolean more = page.size() > limit || (fetch == limit && page.size() == limit);
            List<AuditEntry> shown = more ? page.subList(0, limit) : page;
            Routes.answer(
                    ctx,
                    200,
                    new ApiJson.Audit(
                            shown.stream().map(ApiJson.AuditView::of).toList(),
                            more ? String.valueOf(shown.get(shown.size() - 1).id()) : null));
        });
    }
}
