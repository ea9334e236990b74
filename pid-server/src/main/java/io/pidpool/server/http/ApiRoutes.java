package io.pidpool.server.http;

/**
 * The routes of one area of the API (cluster, modules, batches, usage, alerts, console …), added to
 * an {@link HttpApi} before it starts with {@link HttpApi#with(ApiRoutes)}. Each area is one small
 * class, so areas are built and changed independently of each other and of {@code HttpApi}, which
 * keeps only what every route shares: authentication, the error format, body limits, the request
 * log.
 *
 * <pre>{@code
 * final class UsageRoutes implements ApiRoutes {
 *     public void register(Routes routes) {
 *         routes.get("/api/v1/usage", Access.READ, ctx -> Routes.answer(ctx, 200, usage(ctx)));
 *     }
 * }
 * }</pre>
 */
@FunctionalInterface
public interface ApiRoutes {
    /** Registers this area's routes. Called once, before the server starts. */
    void register(Routes routes);
}
