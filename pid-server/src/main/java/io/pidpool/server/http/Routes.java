package io.pidpool.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.Handler;
import io.javalin.security.RouteRole;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.config.Role.Access;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Objects;

/**
 * What an {@link ApiRoutes} area registers its routes with, and the helpers every handler shares.
 * A route names the {@link Access} it needs; {@code HttpApi} checks the bearer token before the
 * handler runs (401 without a valid token, 403 when the role does not allow the access), so a
 * handler never checks roles itself. Handlers throw {@link PidPoolException} (or let parsing
 * helpers throw) and {@code HttpApi} turns it into the one error shape {@code {"error", "field",
 * "code"}}.
 *
 * <p>Only used while the server is being built (single thread); the static helpers are thread-safe.
 */
public final class Routes {
    static final String JSON = "application/json";
    static final String PRINCIPAL = "pidpool.principal";

    /** The access a route needs, as a Javalin route role. */
    record Requires(Access access) implements RouteRole {}

    private final Javalin app;
    private final long maxRequestBytes;
    private final boolean metricsRequireToken;

    Routes(Javalin app, long maxRequestBytes, boolean metricsRequireToken) {
        this.app = Objects.requireNonNull(app, "app");
        this.maxRequestBytes = maxRequestBytes;
        this.metricsRequireToken = metricsRequireToken;
    }

    /**
     * {@code GET path} for metrics scrapers: open, or needing a viewer token when {@code
     * http.metricsRequireToken} is set.
     */
    public Routes metrics(String path, Handler handler) {
        return metricsRequireToken ? get(path, Access.READ, handler) : getPublic(path, handler);
    }

    /** A route open to everyone ({@code /health}, the console). */
    public Routes getPublic(String path, Handler handler) {
        app.get(path, handler);
        return this;
    }

    public Routes get(String path, Access access, Handler handler) {
        app.get(path, handler, new Requires(Objects.requireNonNull(access, "access")));
        return this;
    }

    public Routes post(String path, Access access, Handler handler) {
        app.post(path, handler, new Requires(Objects.requireNonNull(access, "access")));
        return this;
    }

    public Routes put(String path, Access access, Handler handler) {
        app.put(path, handler, new Requires(Objects.requireNonNull(access, "access")));
        return this;
    }

    public Routes delete(String path, Access access, Handler handler) {
        app.delete(path, handler, new Requires(Objects.requireNonNull(access, "access")));
        return this;
    }

    /** The Javalin app itself, for what the methods above do not cover. Prefer them. */
    public Javalin app() {
        return app;
    }

    /** Who sent the request; only on routes that need an {@link Access}. */
    public static Principal principal(Context ctx) {
        return Objects.requireNonNull(ctx.attribute(PRINCIPAL), "no principal: the route is public");
    }

    /** Writes {@code body} as JSON (with the API's one object mapper) and the status. */
    public static void answer(Context ctx, int status, Object body) {
        byte[] bytes;
        try {
            bytes = ApiJson.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "response of type " + body.getClass().getSimpleName() + " is not JSON", e);
        }
        ctx.status(status).contentType(JSON).result(bytes);
    }

    /**
     * Reads at most {@code http.maxRequestBytes} of a JSON body, whether or not the client sent a
     * {@code Content-Length} (413 beyond), requires {@code Content-Type: application/json} (415),
     * and parses strictly: duplicate keys and trailing data are 400; the parser's own message is
     * not repeated, since it may quote the offending token (which may be a secret).
     */
    public JsonNode readJson(Context ctx) {
        String type = ctx.contentType();
        String mediaType = type == null ? "" : type.split(";", 2)[0].trim();
        if (!mediaType.equalsIgnoreCase(JSON)) {
            throw new HttpApi.ApiException(
                    415,
                    "UNSUPPORTED_MEDIA_TYPE",
                    "Content-Type",
                    "Content-Type must be application/json, was " + (type == null ? "(none)" : "'" + type + "'"));
        }
        long limit = maxRequestBytes;
        long declared = ctx.req().getContentLengthLong();
        if (declared > limit) {
            throw tooLarge(limit);
        }
        byte[] body;
        try (InputStream in = ctx.req().getInputStream()) {
            body = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
        } catch (IOException e) {
            throw new UncheckedIOException("reading the request body failed", e);
        }
        if (body.length > limit) {
            throw tooLarge(limit);
        }
        if (body.length == 0) {
            throw PidPoolException.invalid(null, "the request body is empty; expected a JSON object");
        }
        try {
            JsonNode node = ApiJson.MAPPER.readTree(body);
            if (node == null || node.isMissingNode()) {
                throw PidPoolException.invalid(null, "the request body is empty; expected a JSON object");
            }
            return node;
        } catch (JsonProcessingException e) {
            var at = e.getLocation();
            String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw PidPoolException.invalid(null, "malformed JSON%s", where);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the request body failed", e);
        }
    }

    static HttpApi.ApiException tooLarge(long limit) {
        return new HttpApi.ApiException(413, "PAYLOAD_TOO_LARGE", null, "request body exceeds " + limit + " bytes");
    }
}
