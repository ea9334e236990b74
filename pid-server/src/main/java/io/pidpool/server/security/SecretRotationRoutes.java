package io.pidpool.server.security;

import io.javalin.http.HandlerType;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.http.HttpApi;
import io.pidpool.server.http.OperatorApi;

/**
 * The admin routes of key rotation:
 *
 * <pre>
 * GET  /api/v1/admin/secrets          {@link SecretRotation.Status}: current key, keyring, accounts per key id
 * POST /api/v1/admin/secrets/reseal   {@link SecretRotation.Report}: UPDATE batches that re-seal stale accounts
 * </pre>
 */
public final class SecretRotationRoutes {
    public static final String STATUS = "/api/v1/admin/secrets";
    public static final String RESEAL = "/api/v1/admin/secrets/reseal";

    private SecretRotationRoutes() {}

    public static void register(HttpApi http, SecretSealer sealer, Repositories repositories, OperatorApi api) {
        SecretRotation rotation = new SecretRotation(
                sealer, repositories.pids(), repositories.operations(), (ops, by) -> api.submit(ops, by)
                        .id());
        http.adminRoute(HandlerType.GET, STATUS, who -> rotation.status());
        http.adminRoute(HandlerType.POST, RESEAL, rotation::reseal);
    }
}
