package io.pidpool.server.http;

import io.javalin.Javalin;

/**
 * Routes kept in a class of their own and added to the API with {@link HttpApi#register}. Handlers
 * throw {@link io.pidpool.core.error.PidPoolException} for bad input; {@link HttpApi} turns it into
 * the one error shape. Routes that need a token pass {@link HttpApi#READ} (or {@code WRITE}) as
 * route role.
 */
@FunctionalInterface
public interface RouteGroup {
    void addTo(Javalin app);
}
