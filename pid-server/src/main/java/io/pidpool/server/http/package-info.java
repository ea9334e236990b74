/**
 * The operator HTTP API (docs/design.md §7) on Javalin: routes, bearer-token roles, request parsing into
 * core {@link io.pidpool.core.model.Operation}s, and the one mapping from
 * {@link io.pidpool.core.error.PidPoolException} to HTTP status codes. It talks to the rest of the
 * server only through {@link io.pidpool.server.http.OperatorApi} and
 * {@link io.pidpool.server.http.HealthCheck}.
 */
package io.pidpool.server.http;
