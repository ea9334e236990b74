package io.pidpool.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.http.Context;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.server.config.Role.Access;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * {@code POST /api/v1/batches[?wait=true&timeoutMs=]}, {@code GET /api/v1/batches/{id}[?wait=true]}
 * and the history {@code GET /api/v1/batches?limit=}. With {@code wait=true} the answer is written
 * when {@link OperatorApi#await} completes (final, or the timeout passed: then 202 with the current
 * status); no Jetty thread waits meanwhile, and all waiters of a server share one watch and one
 * poll ({@code BatchService}).
 *
 * <p>An {@code Idempotency-Key} header makes {@code POST /api/v1/batches} safe to retry: the same
 * principal, key and request answer the batch the first request made (docs/http-api.md).
 */
final class BatchRoutes implements ApiRoutes {
    static final Duration DEFAULT_WAIT = Duration.ofSeconds(30);
    static final Duration MAX_WAIT = Duration.ofMinutes(2);
    static final int DEFAULT_LIST = 20;
    static final int MAX_LIST = 500;

    private final OperatorApi api;

    BatchRoutes(OperatorApi api) {
        this.api = Objects.requireNonNull(api, "api");
    }

    @Override
    public void register(Routes routes) {
        routes.post("/api/v1/batches", Access.WRITE, ctx -> {
            WaitSpec wait = waitSpec(ctx);
            String header = ctx.header(IdempotencyKey.FIELD);
            IdempotencyKey key = header == null ? null : new IdempotencyKey(header);
            JsonNode body = routes.readJson(ctx);
            List<Operation<String>> ops = RequestParser.batch(body);
            submitAndAnswer(ctx, ops, wait, key, key == null ? null : RequestFingerprint.of(body));
        });
        routes.get("/api/v1/batches", Access.READ, ctx -> {
            int limit = Params.limit(ctx, "limit", DEFAULT_LIST, MAX_LIST);
            Routes.answer(
                    ctx,
                    200,
                    new ApiJson.Batches(api.batches(limit).stream()
                            .map(ApiJson.BatchSummary::of)
                            .toList()));
        });
        routes.get("/api/v1/batches/{id}", Access.READ, ctx -> {
            BatchId id = new BatchId(Params.longValue(ctx.pathParam("id"), "id"));
            WaitSpec wait = waitSpec(ctx);
            if (wait.waiting()) {
                // many clients may wait on one batch: they share the server's one watch and poll
                ctx.future(() -> api.await(id, wait.timeout()).thenAccept(batch -> answerBatch(ctx, batch)));
                return;
            }
            BatchRecord batch = api.batch(id).orElseThrow(() -> PidPoolException.notFound("id", "no batch %s", id));
            Routes.answer(ctx, 200, ApiJson.Batch.of(batch));
        });
    }

    record WaitSpec(boolean waiting, Duration timeout) {}

    static WaitSpec waitSpec(Context ctx) {
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
            long ms = Params.longValue(timeout, "timeoutMs");
            if (ms < 1 || ms > MAX_WAIT.toMillis()) {
                throw PidPoolException.invalid(
                        "timeoutMs", "timeoutMs must be within 1..%d, was %d", MAX_WAIT.toMillis(), ms);
            }
            duration = Duration.ofMillis(ms);
        }
        return new WaitSpec(waiting, duration);
    }

    void submitAndAnswer(Context ctx, List<Operation<String>> ops, WaitSpec wait) {
        submitAndAnswer(ctx, ops, wait, null, null);
    }

    /** With an idempotency key ({@code null}: none) and the request's fingerprint. */
    void submitAndAnswer(
            Context ctx, List<Operation<String>> ops, WaitSpec wait, IdempotencyKey key, String fingerprint) {
        Principal principal = Routes.principal(ctx);
        // the batch-wide rules (OperationBatch) are checked by the submit, before anything is recorded
        BatchRecord recorded =
                key == null ? api.submit(ops, principal.name()) : api.submit(ops, principal.name(), key, fingerprint);
        BatchId id = recorded.id();
        ctx.header("Location", "/api/v1/batches/" + id);
        if (wait.waiting() && !recorded.status().isFinal()) {
            ctx.future(() -> api.await(id, wait.timeout()).thenAccept(batch -> answerBatch(ctx, batch)));
        } else {
            answerBatch(ctx, recorded); // as recorded: the leader may be applying it already
        }
    }

    private static void answerBatch(Context ctx, BatchRecord batch) {
        Routes.answer(ctx, batch.status().isFinal() ? 200 : 202, ApiJson.Batch.of(batch));
    }
}
