package io.pidpool.server.http;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.http.staticfiles.Location;
import io.javalin.util.JavalinBindException;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.server.config.HttpConfig;
import io.pidpool.server.config.Role.Access;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator HTTP API of docs/design.md §7 on Javalin (Jetty): what every route shares. The routes
 * themselves come in per-area {@link ApiRoutes} classes added with {@link #with(ApiRoutes)} before
 * {@link #start()}; the four-argument constructor adds the built-in areas (cluster and health,
 * modules, batches, PIDs).
 *
 * <p>A route that names an {@link Access} needs an {@code Authorization: Bearer <token>} whose role
 * allows it (viewer: reads; operator: writes; admin: everything), checked here before the handler
 * runs: 401 without a valid token, 403 for a role that may not. Public routes: {@code /health} and
 * the console at {@code /}.
 *
 * <p>Request bodies are read by {@link Routes#readJson}, not by Javalin: at most {@code
 * maxRequestBytes} are read whether or not the client sent a {@code Content-Length} (larger bodies
 * get 413), the content type must be JSON (415), and the JSON is parsed strictly. Everything is
 * validated before the {@link OperatorApi} is called, so a rejected request changes nothing.
 * Errors have one shape, {@code {"error", "field", "code"}}, produced in one place ({@link
 * #answerError}); a wrong method on a known path is 405 with {@code Allow} (before the token is
 * read, like an unknown path's 404). {@link #routes()} lists what was registered, for the OpenAPI
 * check. The request log carries method, path, status, duration and the token's name:
 * never a body, a query or a header.
 *
 * <p>Concurrency: routes are added by the building thread before start; handlers run on Jetty's
 * thread pool and share no mutable state; {@code ?wait=true} answers asynchronously when {@link
 * OperatorApi#await} completes, holding no thread.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    /**
     * Where to listen and how large a body may be.
     *
     * @param metricsRequireToken whether {@code /metrics} needs a (viewer) token; open otherwise
     */
    public record Settings(String host, int port, long maxRequestBytes, boolean metricsRequireToken) {
        public Settings(String host, int port, long maxRequestBytes) {
            this(host, port, maxRequestBytes, false);
        }

        public static Settings of(HttpConfig http) {
            return new Settings(http.host(), http.port(), http.maxRequestBytes(), http.metricsRequireToken());
        }
    }

    /** An answer that is not a {@link PidPoolException}: 401, 403, 413, 415. */
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

    /**
     * Sees every answered request (for metrics); called on Jetty's thread after the answer, must be
     * quick and must not throw.
     */
    @FunctionalInterface
    public interface RequestObserver {
        /**
         * @param route the matched route template (e.g. {@code /api/v1/modules/{module}}), {@code
         *     static} for the console's files, {@code unmatched} for a path no route has
         */
        void observed(String method, String route, int status, long nanos);
    }

    private enum State {
        NEW,
        STARTED,
        STOPPED
    }

    private final Settings settings;
    private final BearerTokens tokens;
    private final Consumer<RejectedWrite> rejections;
    private final Javalin app;
    private final Routes routes;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private volatile RequestObserver observer = (method, route, status, nanos) -> {};
    private final List<Route> registered = new CopyOnWriteArrayList<>();

    /** A registered route: method and Javalin path pattern ({@code /api/v1/pids/{id}}). */
    public record Route(String method, String path) {}

    /**
     * The shared parts only, without an audit trail for refused writes (tests of one area): add
     * every area with {@link #with(ApiRoutes)}.
     */
    public HttpApi(Settings settings, BearerTokens tokens) {
        this(settings, tokens, attempt -> {});
    }

    /**
     * The shared parts only: add every area with {@link #with(ApiRoutes)}.
     *
     * @param rejections receives every write request refused with a 4xx (for the audit trail); must
     *     not throw
     */
    public HttpApi(Settings settings, BearerTokens tokens, Consumer<RejectedWrite> rejections) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.tokens = Objects.requireNonNull(tokens, "tokens");
        this.rejections = Objects.requireNonNull(rejections, "rejections");
        this.app = Javalin.create(config -> {
            config.showJavalinBanner = false;
            config.startupWatcherEnabled = false;
            config.http.maxRequestSize = settings.maxRequestBytes();
            // a wrong method on a known path is 405 with an Allow header, not 404
            config.http.prefer405over404 = true;
            config.events(events -> events.handlerAdded(info -> {
                if (info.getHttpMethod().isHttpMethod()) { // not the before/after filters
                    registered.add(new Route(info.getHttpMethod().name(), info.getPath()));
                }
            }));
            config.staticFiles.add(files -> {
                files.hostedPath = "/";
                files.directory = "/console";
                files.location = Location.CLASSPATH;
            });
            config.requestLogger.http(this::logRequest);
        });
        this.routes = new Routes(app, settings.maxRequestBytes(), settings.metricsRequireToken());
        app.beforeMatched(this::authorize);
        app.exception(Exception.class, (e, ctx) -> answerError(ctx, e));
        app.exception(HttpResponseException.class, (e, ctx) -> answerError(ctx, e));
    }

    /**
     * The shared parts and the built-in areas: health and cluster, modules, batches, PIDs, audit;
     * refused writes go to {@link OperatorApi#rejected}.
     */
    public HttpApi(Settings settings, OperatorApi api, HealthCheck health, BearerTokens tokens) {
        this(settings, tokens, api::rejected);
        BatchRoutes batches = new BatchRoutes(api);
        with(new ClusterRoutes(api, health));
        with(new ModuleRoutes(api, batches));
        with(batches);
        with(new PidRoutes(api));
        with(new AuditRoutes(api));
        with(new OpenApiRoutes());
    }

    /** Adds the alert and recommendation routes ({@link AdviceRoutes}); call before {@link #start()}. */
    public HttpApi advice(io.pidpool.server.advice.AdviceApi advice) {
        return with(new AdviceRoutes(advice));
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

    /**
     * Adds an admin-only JSON route (before {@link #start()}) for a feature that lives outside this
     * class (e.g. key rotation): {@code handler} gets the token's name and returns the 200 body.
     */
    public HttpApi adminRoute(
            io.javalin.http.HandlerType method, String path, java.util.function.Function<String, Object> handler) {
        return with(routes -> routes.app()
                .addHttpHandler(
                        method,
                        path,
                        ctx -> Routes.answer(
                                ctx, 200, handler.apply(Routes.principal(ctx).name())),
                        new Routes.Requires(Access.ADMIN)));
    }

    /** Sets who sees every answered request (metrics); before {@link #start()}. */
    public HttpApi observe(RequestObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
        return this;
    }

    /**
     * Every route registered so far, in order (the console's static files excepted): what the
     * OpenAPI document must describe.
     */
    public List<Route> routes() {
        return List.copyOf(registered);
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

    /**
     * Adds an area's routes. Only before {@link #start()}; areas are registered in order, and a path
     * may be registered by one area only.
     */
    public HttpApi with(ApiRoutes area) {
        if (state.get() != State.NEW) {
            throw PidPoolException.illegalState("routes must be added before the HTTP API starts");
        }
        Objects.requireNonNull(area, "area").register(routes);
        return this;
    }

    // ---------------------------------------------------------------- authentication

    private void authorize(Context ctx) {
        Routes.Requires requires = ctx.routeRoles().stream()
                .filter(Routes.Requires.class::isInstance)
                .map(Routes.Requires.class::cast)
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
        ctx.attribute(Routes.PRINCIPAL, principal);
        if (!principal.role().allows(requires.access())) {
            throw new ApiException(
                    403,
                    ErrorCode.FORBIDDEN.name(),
                    null,
                    "role " + principal.role().name().toLowerCase(Locale.ROOT) + " may not "
                            + switch (requires.access()) {
                                case READ -> "read this";
                                case WRITE -> "change this (needs operator)";
                                case ADMIN -> "use this (needs admin)";
                            });
        }
    }

    private static ApiException unauthenticated(String message) {
        return new ApiException(401, "UNAUTHENTICATED", "Authorization", message);
    }

    // ---------------------------------------------------------------- answers

    private static void answer(Context ctx, int status, Object body) {
        Routes.answer(ctx, status, body);
    }

    /** The one place where failures become HTTP answers. */
    private void answerError(Context ctx, Exception e) {
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
        } else if (e instanceof HttpResponseException h && h.getStatus() == 405) {
            status = 405;
            String allowed =
                    String.join(", ", new java.util.TreeSet<>(h.getDetails().values()));
            if (!allowed.isEmpty()) {
                ctx.header("Allow", allowed);
            }
            error = new ApiJson.Error(
                    ctx.method() + " is not allowed on " + ctx.path()
                            + (allowed.isEmpty() ? "" : "; allowed: " + allowed),
                    null,
                    "METHOD_NOT_ALLOWED");
        } else if (e instanceof HttpResponseException h) {
            status = h.getStatus();
            error = new ApiJson.Error(
                    h.getMessage(), null, status == 404 ? ErrorCode.NOT_FOUND.name() : "HTTP_" + status);
        } else {
            status = 500;
            error = new ApiJson.Error("internal error", null, "INTERNAL");
            log.error("{} {} failed", ctx.method(), ctx.path(), e);
        }
        if (status >= 400 && status < 500 && isWrite(ctx)) {
            audit(ctx, status, error);
        }
        if (status >= 500 && status != 500) {
            log.warn("{} {} -> {}: {}", ctx.method(), ctx.path(), status, e.getMessage());
        }
        answer(ctx, status, error);
    }

    private static boolean isWrite(Context ctx) {
        return switch (ctx.method()) {
            case POST, PUT, PATCH, DELETE -> true;
            default -> false;
        };
    }

    private void audit(Context ctx, int status, ApiJson.Error error) {
        Principal principal = ctx.attribute(Routes.PRINCIPAL);
        try {
            rejections.accept(new RejectedWrite(
                    principal == null ? RejectedWrite.ANONYMOUS : principal.name(),
                    ctx.method().name(),
                    ctx.path(),
                    status,
                    error.code(),
                    error.field(),
                    error.error(),
                    ctx.ip()));
        } catch (RuntimeException e) {
            log.warn(
                    "{} {} -> {}: the refusal could not be audited: {}",
                    ctx.method(),
                    ctx.path(),
                    status,
                    e.toString());
        }
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

    private void logRequest(Context ctx, Float millis) {
        try {
            observer.observed(ctx.method().name(), routeOf(ctx), ctx.statusCode(), (long) (millis * 1_000_000.0));
        } catch (RuntimeException e) {
            log.debug("request observer failed: {}", e.toString());
        }
        Principal principal = ctx.attribute(Routes.PRINCIPAL);
        String who = principal == null ? "-" : principal.name();
        if (ctx.path().equals("/health")) {
            log.debug("{} {} -> {} ({} ms)", ctx.method(), ctx.path(), ctx.statusCode(), Math.round(millis));
        } else {
            log.info("{} {} -> {} ({} ms, {})", ctx.method(), ctx.path(), ctx.statusCode(), Math.round(millis), who);
        }
    }

    /** The matched route template; raw paths would make one metric series per PID or batch id. */
    private static String routeOf(Context ctx) {
        String route;
        try {
            route = ctx.endpointHandlerPath();
        } catch (RuntimeException e) {
            route = null;
        }
        if (route == null || route.isEmpty() || route.equals("*")) {
            return ctx.statusCode() == 404 ? "unmatched" : "static";
        }
        return route;
    }
}
