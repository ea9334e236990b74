package io.pidpool.client.internal.quota;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.redisson.api.BatchOptions;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RFuture;
import org.redisson.api.RScript;
import org.redisson.api.RScriptAsync;
import org.redisson.api.RedissonClient;
import org.redisson.client.RedisException;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.codec.StringCodec;

/**
 * The quota Lua scripts and how they run: each script is loaded once ({@code SCRIPT LOAD} on every
 * master), run with {@code EVALSHA}, and loaded again when Redis answers {@code NOSCRIPT} (after a
 * restart, a failover to a replica that never saw the script, or a {@code SCRIPT FLUSH}); the call is
 * then repeated once, which is safe because every script is idempotent by its ids. Results are
 * decoded with {@link StringCodec}: integers arrive as {@link Long}, strings as {@link String}.
 *
 * <p>Redis and Redisson errors become {@link PidPoolException} {@link ErrorCode#UNAVAILABLE}: the
 * call may or may not have taken effect, and repeating it with the same ids is safe.
 *
 * <p>Thread-safe: the digest table is fixed at construction; loads may race and are idempotent.
 */
final class QuotaScripts {
    /** The scripts, each {@code common.lua} + its own file. */
    enum Script {
        DEDUCT("deduct.lua"),
        DEDUCT_BATCH("deduct_batch.lua"),
        REFUND("refund.lua"),
        RESET("reset.lua"),
        SET_LIMIT("set_limit.lua"),
        USAGE("usage.lua"),
        INDEX_LOOKUP("index_lookup.lua"),
        LAYOUT("layout.lua"),
        EVENTS_READ("events_read.lua"),
        EVENTS_ACK("events_ack.lua"),
        EVENTS_OFFSET("events_offset.lua"),
        EVENTS_HEADS("events_heads.lua"),
        EVENTS_TRIM("events_trim.lua");

        final String file;
        final String source;
        final String sha;

        Script(String file) {
            this.file = file;
            this.source = resource("common.lua") + "\n" + resource(file);
            this.sha = sha1(source);
        }
    }

    private final RedissonClient redisson;
    private final RScript script;
    private final ConcurrentMap<Script, Boolean> loaded = new ConcurrentHashMap<>();
    private static final int MAX_BOUNDED_SCRIPTS = 256;

    /** Script objects whose calls are bounded in time, by bound in whole milliseconds. */
    private final ConcurrentMap<java.time.Duration, RScript> boundedScripts = new ConcurrentHashMap<>();

    private final boolean cluster;

    QuotaScripts(RedissonClient redisson) {
        this.redisson = redisson;
        this.script = redisson.getScript(StringCodec.INSTANCE);
        this.cluster = redisson.getConfig().isClusterConfig();
    }

    /**
     * Whether keys of different hash tags may not meet in one script (Redis Cluster: CROSSSLOT). On a
     * single Redis, a master with replicas or Sentinel every key lives on one master, so one script may
     * touch several shards.
     */
    boolean cluster() {
        return cluster;
    }

    /** Loads every script now (at start), so the first calls do not pay for a NOSCRIPT round trip. */
    void loadAll() {
        for (Script s : Script.values()) {
            load(s);
        }
    }

    private void load(Script s) {
        try {
            String sha = script.scriptLoad(s.source);
            if (!s.sha.equalsIgnoreCase(sha)) {
                throw PidPoolException.illegalState(
                        "Redis computed digest %s for script %s, expected %s", sha, s.file, s.sha);
            }
            loaded.put(s, Boolean.TRUE);
        } catch (RedisException e) {
            throw unavailable("loading script " + s.file, e);
        }
    }

    /** Runs {@code s} with EVALSHA; routed by the first key. */
    @SuppressWarnings("unchecked")
    <R> R run(Script s, List<Object> keys, Object... args) {
        for (int attempt = 0; ; attempt++) {
            try {
                return (R) script.evalSha(
                        (String) keys.get(0), RScript.Mode.READ_WRITE, s.sha, RScript.ReturnType.MULTI, keys, args);
            } catch (RuntimeException e) {
                if (attempt == 0 && isNoScript(e)) {
                    load(s);
                    continue;
                }
                throw translate("running script " + s.file, e);
            }
        }
    }

    /** Runs {@code s} with EVALSHA, returning a single value (a bulk string or an integer). */
    @SuppressWarnings("unchecked")
    <R> R runValue(Script s, List<Object> keys, Object... args) {
        for (int attempt = 0; ; attempt++) {
            try {
                return (R) script.evalSha(
                        (String) keys.get(0), RScript.Mode.READ_WRITE, s.sha, RScript.ReturnType.VALUE, keys, args);
            } catch (RuntimeException e) {
                if (attempt == 0 && isNoScript(e)) {
                    load(s);
                    continue;
                }
                throw translate("running script " + s.file, e);
            }
        }
    }

    /** One EVALSHA of a pipelined batch. */
    record Call(Script script, List<Object> keys, Object[] args) {}

    /**
     * Runs several calls in one pipelined round trip (an {@link RBatch}, not a transaction: each
     * script is atomic on its own). Returns their MULTI results in order.
     */
    List<Object> runBatch(List<Call> calls) {
        if (calls.size() == 1) {
            Call c = calls.get(0);
            List<Object> reply = run(c.script(), c.keys(), c.args());
            return List.of((Object) reply);
        }
        return pipelined(calls, RScript.ReturnType.MULTI);
    }

    /** {@link #runBatch} of scripts that answer one value each (as {@link #runValue}): their values in order. */
    List<Object> runValueBatch(List<Call> calls) {
        return pipelined(calls, RScript.ReturnType.VALUE);
    }

    private List<Object> pipelined(List<Call> calls, RScript.ReturnType type) {
        for (int attempt = 0; ; attempt++) {
            try {
                RBatch batch = redisson.createBatch(BatchOptions.defaults());
                RScriptAsync s = batch.getScript(StringCodec.INSTANCE);
                for (Call c : calls) {
                    RFuture<Object> ignored = evalSha(s, c, type);
                }
                BatchResult<?> result = batch.execute();
                @SuppressWarnings("unchecked")
                List<Object> responses = (List<Object>) result.getResponses();
                return responses;
            } catch (RuntimeException e) {
                if (attempt == 0 && isNoScript(e)) {
                    calls.stream().map(Call::script).distinct().forEach(this::load);
                    continue;
                }
                throw translate("running a batch of " + calls.size() + " scripts", e);
            }
        }
    }

    /**
     * {@link #runBatch} without blocking: sends the calls (one EVALSHA, or one pipelined {@link RBatch}
     * for several) and completes, on a Redisson thread, with their MULTI results in order. After a
     * NOSCRIPT the scripts are loaded (asynchronously) and the calls sent once more, which their ids
     * make safe. Fails with the raw Redisson exception; callers translate it ({@link #translate}).
     * Callbacks on the returned future must not call Redisson synchronously.
     */
    CompletableFuture<List<Object>> runBatchAsync(List<Call> calls) {
        return runBatchAsync(calls, null);
    }

    /**
     * {@link #runBatchAsync(List)} given up by Redisson itself after {@code timeout} (no retry of its
     * own); {@code null}: the client's configured timeout and retries.
     */
    CompletableFuture<List<Object>> runBatchAsync(List<Call> calls, java.time.Duration timeout) {
        if (timeout != null && calls.size() == 1) {
            return runBoundedAsync(calls.get(0), timeout).thenApply(r -> List.of((Object) r));
        }
        return sendAsync(calls, timeout).exceptionallyCompose(e -> {
            if (!isNoScript(e)) {
                return CompletableFuture.failedFuture(e);
            }
            CompletableFuture<?>[] loads = calls.stream()
                    .map(Call::script)
                    .distinct()
                    .map(s -> script.scriptLoadAsync(s.source).toCompletableFuture())
                    .toArray(CompletableFuture[]::new);
            return CompletableFuture.allOf(loads).thenCompose(done -> sendAsync(calls, timeout));
        });
    }

    /**
     * One call that Redisson gives up on by itself after {@code timeout}, with no retry of its own
     * (the caller decides whether time is left to send it again): sends it and completes on a
     * Redisson thread with its MULTI result, or fails with the raw Redisson exception. A NOSCRIPT
     * answer loads the script and sends the call once more, within the same bound.
     */
    @SuppressWarnings("unchecked")
    CompletableFuture<List<Object>> runBoundedAsync(Call c, java.time.Duration timeout) {
        return bounded(c, timeout, RScript.ReturnType.MULTI).thenApply(r -> (List<Object>) r);
    }

    /** {@link #runBoundedAsync} for a script that returns a single value (a bulk string, an integer or nil). */
    CompletableFuture<Object> runBoundedValueAsync(Call c, java.time.Duration timeout) {
        return bounded(c, timeout, RScript.ReturnType.VALUE);
    }

    private CompletableFuture<Object> bounded(Call c, java.time.Duration timeout, RScript.ReturnType type) {
        RScript bounded = boundedScript(timeout);
        CompletableFuture<Object> first = evalSha(bounded, c, type).toCompletableFuture();
        return first.exceptionallyCompose(e -> {
            if (!isNoScript(e)) {
                return CompletableFuture.failedFuture(e);
            }
            return bounded.scriptLoadAsync(c.script().source)
                    .toCompletableFuture()
                    .thenCompose(sha -> evalSha(bounded, c, type).toCompletableFuture());
        });
    }

    /**
     * A script object whose calls Redisson gives up after {@code timeout} (rounded up to the
     * millisecond). Callers pass what is left of their deadline, so bounds vary per call: the cache
     * holds at most {@value #MAX_BOUNDED_SCRIPTS} of them (a fresh object costs little) instead of
     * growing by one per call.
     */
    private RScript boundedScript(java.time.Duration timeout) {
        long ms = Math.max(1, (timeout.toNanos() + 999_999) / 1_000_000);
        java.time.Duration t = java.time.Duration.ofMillis(ms);
        RScript cached = boundedScripts.get(t);
        if (cached != null) {
            return cached;
        }
        RScript fresh = redisson.getScript(org.redisson.api.options.OptionalOptions.defaults()
                .codec(StringCodec.INSTANCE)
                .timeout(t)
                .retryAttempts(0));
        if (boundedScripts.size() < MAX_BOUNDED_SCRIPTS) {
            boundedScripts.putIfAbsent(t, fresh);
        }
        return fresh;
    }

    /** One EVALSHA of {@code c} (routed by its first key), alone or queued in a batch. */
    private static RFuture<Object> evalSha(RScriptAsync s, Call c) {
        return evalSha(s, c, RScript.ReturnType.MULTI);
    }

    private static RFuture<Object> evalSha(RScriptAsync s, Call c, RScript.ReturnType type) {
        return s.evalShaAsync(
                (String) c.keys().get(0), RScript.Mode.READ_WRITE, c.script().sha, type, c.keys(), c.args());
    }

    private CompletableFuture<List<Object>> sendAsync(List<Call> calls, java.time.Duration timeout) {
        if (calls.size() == 1) {
            Call c = calls.get(0);
            return evalSha(script, c).toCompletableFuture().thenApply(List::of);
        }
        BatchOptions options = BatchOptions.defaults();
        if (timeout != null) {
            options = options.responseTimeout(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
                    .retryAttempts(0);
        }
        RBatch batch = redisson.createBatch(options);
        RScriptAsync s = batch.getScript(StringCodec.INSTANCE);
        for (Call c : calls) {
            RFuture<Object> ignored = evalSha(s, c);
        }
        return batch.executeAsync().toCompletableFuture().thenApply(r -> {
            @SuppressWarnings("unchecked")
            List<Object> responses = (List<Object>) r.getResponses();
            return responses;
        });
    }

    static boolean isNoScript(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof RedisNoScriptException
                    || (t.getMessage() != null && t.getMessage().contains("NOSCRIPT"))) {
                return true;
            }
        }
        return false;
    }

    private static boolean isScriptFailure(Throwable e) {
        String m = e.getMessage();
        return m != null && (m.contains("user_script") || m.contains("Error running script"));
    }

    static PidPoolException translate(String what, RuntimeException e) {
        if (e instanceof PidPoolException p) {
            return p;
        }
        if (e instanceof RedisException && isScriptFailure(e)) {
            // a bug or a corrupted value, not an outage: retrying will not help
            return new PidPoolException(
                    ErrorCode.ILLEGAL_STATE, null, "Redis failed " + what + ": " + e.getMessage(), e);
        }
        if (e instanceof RedisException) {
            return unavailable(what, e);
        }
        // Redisson wraps some failures (e.g. interrupted waits) in plain runtime exceptions
        if (e.getCause() instanceof RedisException) {
            return unavailable(what, e);
        }
        throw e;
    }

    static PidPoolException unavailable(String what, Throwable e) {
        return PidPoolException.unavailable("Redis failed " + what + ": " + e.getMessage(), e);
    }

    /** A failed bounded call's error as the ledger raises it: {@code UNAVAILABLE} unless a script failed. */
    static PidPoolException failure(String what, Throwable error) {
        Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                ? error.getCause()
                : error;
        return cause instanceof RuntimeException re ? translate(what, re) : unavailable(what, cause);
    }

    private static String resource(String file) {
        try (InputStream in = QuotaScripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read script resource " + file, e);
        }
    }

    private static String sha1(String source) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is required by every JDK", e);
        }
    }
}
