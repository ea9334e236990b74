package io.pidpool.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.staticfiles.Location;
import io.javalin.security.RouteRole;
import io.javalin.util.JavalinBindException;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Names;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.PidStatus;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.config.HttpConfig;
import io.pidpool.server.config.Role.Access;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator HTTP API of DESIGN.md §7 on Javalin (Jetty). Every {@code /api/v1} route needs an
 * {@code Authorization: Bearer <token>} whose role allows it (viewer: reads; operator: writes;
 * admin: everything); {@code /health} and the console at {@code /} are public.
 *
 * <p>Request bodies are read by this class, not by Javalin: at most {@code maxRequestBytes} are
 * read whether or not the client sent a {@code Content-Length} (larger bodies get 413), the
 * content type must be JSON (415), and the JSON is parsed strictly (duplicate keys, trailing
 * data and unknown fields are 400). Everything is validated before the {@link OperatorApi} is
 * called, so a rejected request changes nothing. Errors have one shape, {@code {"error", "field",
 * "code"}}, produced in one place ({@link #answerError}). The request log carries method, path,
 * status, duration and the token's name: never a body, a query or a header.
 *
 * <p>Concurrency: handlers run on Jetty's thread pool and share no mutable state; {@code
 * ?wait=true} answers asynchronously when {@link OperatorApi#await} completes, holding no thread.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);
    static final Duration MAX_WAIT = Duration.ofMinutes(2);
    private static final String PRINCIPAL = "pidpool.principal";
    private static final String JSON = "application/json";

    /** Where to listen and how large a body may be. */
    public record Settings(String host, int port, long maxRequestBytes) {
        public static Settings of(HttpConfig http) {
            return new Settings(http.host(), http.port(), http.maxRequestBytes());
        }
    }

    /** The access a route needs, as a Javalin route role. */
    record Requires(Access access) implements RouteRole {}

    /** An answer that is not a {@link PidPoolException}: 401, 413, 415. */
    static final class ApiException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;
        final String field;
        final String code;

        ApiException(int status, String code, String field, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
            this.field = field;
        }
    }

    private enum State {
        NEW,
        STARTED,
        STOPPED
    }

    private final Settings settings;
    private final OperatorApi api;
    private final HealthCheck health;
    private final BearerTokens tokens;
    private final Javalin app;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);

    public HttpApi(Settings settings, OperatorApi api, HealthCheck health, BearerTokens tokens) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.api = Objects.requireNonNull(api, "api");
        this.health = Objects.requireNonNull(health, "health");
        this.tokens = Objects.requireNonNull(tokens, "tokens");
        this.app = Javalin.create(config -> {
            config.showJavalinBanner = false;
            config.startupWatcherEnabled = false;
            config.http.maxRequestSize = settings.maxRequestBytes();
            config.staticFiles.add(files -> {
                files.hostedPath = "/";
                files.directory = "/console";
                files.location = Location.CLASSPATH;
            });
            config.requestLogger.http(HttpApi::logRequest);
        });
        routes();
    }

    /** Route role of routes any token may call (viewer or better); for {@link RouteGroup}s. */
    static final RouteRole READ = new Requires(Access.READ);

    /** Adds routes kept in a class of their own (e.g. {@link UsageRoutes}); call before {@link #start()}. */
    public HttpApi register(RouteGroup group) {
        group.addTo(app);
        return this;
    }

    /** Binds the port. Throws {@code UNAVAILABLE} if it is taken. */
    public HttpApi start() {
        if (!state.compareAndSet(State.NEW, State.STARTED)) {
            throw PidPoolException.illegalState("HTTP API was already started");
        }
        try {
            app.start(settings.host(), settings.port());
        } catch (JavalinBindException e) {
            throw PidPoolException.unavailable(
                    "cannot listen on " + settings.host() + ":" + settings.port() + ": port in use or not allowed", e);
        }
        log.info("HTTP API listening on {}:{}", settings.host(), port());
        return this;
    }

    /** The bound port (the real one when configured with 0). */
    public int port() {
        return app.port();
    }

    @Override
    public void close() {
        if (state.getAndSet(State.STOPPED) == State.STARTED) {
            app.stop();
        }
    }

    // ---------------------------------------------------------------- routes

    private void routes() {
        Requires read = new Requires(Access.READ);
        Requires write = new Requires(Access.WRITE);

        app.beforeMatched(this::authorize);
        app.exception(Exception.class, (e, ctx) -> answerError(ctx, e));
        app.exception(HttpResponseException.class, (e, ctx) -> answerError(ctx, e));

        app.get("/health", ctx -> {
            HealthCheck.Report report = health.report();
            answer(ctx, report.status() == HealthCheck.Status.UP ? 200 : 503, report);
        });
        app.get(
                "/api/v1/cluster",
                ctx -> {
                    OperatorApi.ClusterView view = api.cluster();
                    answer(
                            ctx,
                            200,
                            new ApiJson.Cluster(
                                    view.cluster(),
                                    view.self(),
                                    view.leader(),
                                    view.epoch(),
                                    view.members(),
                                    health.report()));
                },
                read);
        app.get("/api/v1/modules", ctx -> answer(ctx, 200, new ApiJson.Modules(api.modules())), read);
        app.get(
                "/api/v1/modules/{module}",
                ctx -> {
                    ModuleKey module = moduleKey(ctx.pathParam("module"), "module");
                    answer(
                            ctx,
                            200,
                            api.module(module)
                                    .orElseThrow(() -> PidPoolException.notFound("module", "no module %s", module)));
                },
                read);
        app.put(
                "/api/v1/modules/{module}",
                ctx -> {
                    ModuleKey module = moduleKey(ctx.pathParam("module"), "module");
                    WaitSpec wait = waitSpec(ctx);
                    Operation op = RequestParser.moduleSettings(module, readJson(ctx));
                    submitAndAnswer(ctx, List.of(op), wait);
                },
                write);
        app.post(
                "/api/v1/batches",
                ctx -> {
                    WaitSpec wait = waitSpec(ctx);
                    List<Operation> ops = RequestParser.batch(readJson(ctx));
                    submitAndAnswer(ctx, ops, wait);
                },
                write);
        app.get(
                "/api/v1/batches/{id}",
                ctx -> {
                    BatchId id = batchId(ctx.pathParam("id"));
                    BatchRecord batch =
                            api.batch(id).orElseThrow(() -> PidPoolException.notFound("id", "no batch %s", id));
                    answer(ctx, 200, ApiJson.Batch.of(batch));
                },
                read);
        app.get("/api/v1/pids", ctx -> answer(ctx, 200, api.pids(pidQuery(ctx))), read);
    }

    private void authorize(Context ctx) {
        Requires requires = ctx.routeRoles().stream()
                .filter(Requires.class::isInstance)
                .map(Requires.class::cast)
                .findFirst()
                .orElse(null);
        if (requires == null) {
            return; // public route
        }
        String header = ctx.header("Authorization");
        if (header == null || header.isBlank()) {
            throw unauthenticated("missing bearer token: send Authorization: Bearer <token>");
        }
        if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw unauthenticated("Authorization must use the Bearer scheme");
        }
        Principal principal = tokens.authenticate(header.substring(7).trim())
                .orElseThrow(() -> unauthenticated("invalid bearer token"));
        ctx.attribute(PRINCIPAL, principal);
        if (!principal.role().allows(requires.access())) {
            throw new ApiException(
                    403,
                    ErrorCode.FORBIDDEN.name(),
                    null,
                    "role " + principal.role().name().toLowerCase(Locale.ROOT) + " may not "
                            + (requires.access() == Access.READ ? "read" : "change") + " this (needs "
                            + (requires.access() == Access.ADMIN ? "admin" : "operator") + ")");
        }
    }

    private static ApiException unauthenticated(String message) {
        return new ApiException(401, "UNAUTHENTICATED", "Authorization", message);
    }

    // ---------------------------------------------------------------- batches

    private record WaitSpec(boolean waiting, Duration timeout) {}

    private static WaitSpec waitSpec(Context ctx) {
        String wait = ctx.queryParam("wait");
        boolean waiting;
        if (wait == null || wait.equals("false")) {
            waiting = false;
        } else if (wait.equals("true")) {
            waiting = true;
        } else {
            throw PidPoolException.invalid("wait", "wait must be true or false, was '%s'", wait);
        }
        String timeout = ctx.queryParam("timeoutMs");
        Duration duration = DEFAULT_WAIT;
        if (timeout != null) {
            long ms = parseLong(timeout, "timeoutMs");
            if (ms < 1 || ms > MAX_WAIT.toMillis()) {
                throw PidPoolException.invalid(
                        "timeoutMs", "timeoutMs must be within 1..%d, was %d", MAX_WAIT.toMillis(), ms);
            }
            duration = Duration.ofMillis(ms);
        }
        return new WaitSpec(waiting, duration);
    }

    private void submitAndAnswer(Context ctx, List<Operation> ops, WaitSpec wait) {
        Principal principal = Objects.requireNonNull(ctx.attribute(PRINCIPAL), "principal");
        // the batch-wide rules (total PIDs, a PID in two operations) before anything is recorded
        OperationBatch.pending(new BatchId(0), ops, principal.name(), Instant.EPOCH);
        BatchId id = api.submit(ops, principal.name());
        ctx.header("Location", "/api/v1/batches/" + id);
        if (wait.waiting()) {
            // no Jetty thread waits: the answer is written when the future completes
            ctx.future(() -> api.await(id, wait.timeout()).thenAccept(batch -> answerBatch(ctx, batch)));
        } else {
            answerBatch(
                    ctx,
                    api.batch(id)
                            .orElseThrow(() -> PidPoolException.unavailable(
                                    "batch " + id + " was accepted but cannot be read back yet; GET /api/v1/batches/"
                                            + id,
                                    null)));
        }
    }

    private static void answerBatch(Context ctx, BatchRecord batch) {
        answer(ctx, batch.status().isFinal() ? 200 : 202, ApiJson.Batch.of(batch));
    }

    // ---------------------------------------------------------------- parameters and bodies

    private static OperatorApi.PidQuery pidQuery(Context ctx) {
        String module = ctx.queryParam("module");
        String state = ctx.queryParam("state");
        String status = ctx.queryParam("status");
        String after = ctx.queryParam("after");
        String limit = ctx.queryParam("limit");
        int size = OperatorApi.PidQuery.DEFAULT_LIMIT;
        if (limit != null) {
            long n = parseLong(limit, "limit");
            if (n < 1 || n > OperatorApi.PidQuery.MAX_LIMIT) {
                throw PidPoolException.invalid(
                        "limit", "limit must be within 1..%d, was %d", OperatorApi.PidQuery.MAX_LIMIT, n);
            }
            size = (int) n;
        }
        return new OperatorApi.PidQuery(
                module == null ? null : moduleKey(module, "module"),
                state == null ? null : enumValue(PidState.class, state, "state"),
                status == null ? null : enumValue(PidStatus.class, status, "status"),
                after == null ? null : Names.requirePidId(after, "after"),
                size);
    }

    private static <E extends Enum<E>> E enumValue(Class<E> type, String text, String field) {
        for (E value : type.getEnumConstants()) {
            if (value.name().equalsIgnoreCase(text)) {
                return value;
            }
        }
        throw PidPoolException.invalid(
                field, "%s must be one of %s, was '%s'", field, List.of(type.getEnumConstants()), text);
    }

    private static ModuleKey moduleKey(String text, String field) {
        try {
            return ModuleKey.parse(text);
        } catch (PidPoolException e) {
            throw PidPoolException.invalid(field, "%s", e.getMessage());
        }
    }

    private static BatchId batchId(String text) {
        return new BatchId(parseLong(text, "id"));
    }

    private static long parseLong(String text, String field) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid(field, "%s must be an integer, was '%s'", field, text);
        }
    }

    /** Reads at most maxRequestBytes of a JSON body and parses it strictly. */
    private JsonNode readJson(Context ctx) {
        String type = ctx.contentType();
        String mediaType = type == null ? "" : type.split(";", 2)[0].trim();
        if (!mediaType.equalsIgnoreCase(JSON)) {
            throw new ApiException(
                    415,
                    "UNSUPPORTED_MEDIA_TYPE",
                    "Content-Type",
                    "Content-Type must be application/json, was " + (type == null ? "(none)" : "'" + type + "'"));
        }
        long limit = settings.maxRequestBytes();
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
            // the parser's own message may quote the offending token (which may be a secret)
            var at = e.getLocation();
            String where = at == null ? "" : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
            throw PidPoolException.invalid(null, "malformed JSON%s", where);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the request body failed", e);
        }
    }

    private static ApiException tooLarge(long limit) {
        return new ApiException(413, "PAYLOAD_TOO_LARGE", null, "request body exceeds " + limit + " bytes");
    }

    // ---------------------------------------------------------------- answers

    private static void answer(Context ctx, int status, Object body) {
        byte[] bytes;
        try {
            bytes = ApiJson.MAPPER.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(
                    "response of type " + body.getClass().getSimpleName() + " is not JSON", e);
        }
        ctx.status(status).contentType(JSON).result(bytes);
    }

    /** The one place where failures become HTTP answers. */
    private static void answerError(Context ctx, Exception e) {
        int status;
        ApiJson.Error error;
        if (e instanceof PidPoolException p) {
            status = statusOf(p.code());
            error = new ApiJson.Error(p.getMessage(), p.field(), p.code().name());
            if (p.code().retryable()) {
                ctx.header("Retry-After", "1");
            }
        } else if (e instanceof ApiException a) {
            status = a.status;
            error = new ApiJson.Error(a.getMessage(), a.field, a.code);
            if (status == 401) {
                ctx.header("WWW-Authenticate", "Bearer realm=\"pidpool\"");
            }
        } else if (e instanceof HttpResponseException h) {
            status = h.getStatus();
            error = new ApiJson.Error(
                    h.getMessage(), null, status == 404 ? ErrorCode.NOT_FOUND.name() : "HTTP_" + status);
        } else {
            status = 500;
            error = new ApiJson.Error("internal error", null, "INTERNAL");
            log.error("{} {} failed", ctx.method(), ctx.path(), e);
        }
        if (status >= 500 && status != 500) {
            log.warn("{} {} -> {}: {}", ctx.method(), ctx.path(), status, e.getMessage());
        }
        answer(ctx, status, error);
    }

    static int statusOf(ErrorCode code) {
        return switch (code) {
            case INVALID_ARGUMENT -> 400;
            case NOT_FOUND -> 404;
            case CONFLICT, ILLEGAL_STATE -> 409;
            case FORBIDDEN -> 403;
            case FENCED, UNAVAILABLE -> 503;
        };
    }

    private static void logRequest(Context ctx, Float millis) {
        Principal principal = ctx.attribute(PRINCIPAL);
        String who = principal == null ? "-" : principal.name();
        if (ctx.path().equals("/health")) {
            log.debug("{} {} -> {} ({} ms)", ctx.method(), ctx.path(), ctx.statusCode(), Math.round(millis));
        } else {
            log.info("{} {} -> {} ({} ms, {})", ctx.method(), ctx.path(), ctx.statusCode(), Math.round(millis), who);
        }
    }
}
