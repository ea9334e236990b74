package io.pidpool.server.redis;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.client.internal.quota.QuotaKeys;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.quota.QuotaMonth;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Reads this month's usage counter of every provisioned PID from Redis for the leader's
 * full scan, without one round trip per PID: per shard a read-only Lua script ({@code
 * usage_scan.lua}) walks the shard's {@code pids} hash with {@code HSCAN} and reads each PID's {@code
 * used} field of {@code u:<pid>:<month>} inside Redis, a page of about {@code pageHint} PIDs per
 * call. All shards run at once (asynchronous calls on Redisson's connections), so a scan of 100,000
 * PIDs in 16 shards costs about {@code 16 × ceil(6,250 / pageHint)} round trips (about 110 with the
 * default page), 16 in flight at a time.
 *
 * <p>Each script call blocks Redis for the page it reads (about a millisecond per 1,000 PIDs on an idle
 * machine); the page is kept small so that, with all shards in flight, no call waits behind more than
 * 16 pages (a large page made calls time out on a loaded machine).  {@code HSCAN} guarantees that every PID present during the
 * whole scan is returned at least once (a rehash may return one twice: the map keeps one); a PID
 * provisioned during the scan may be missed until the next one.
 *
 * <p>Concurrency: thread-safe and stateless between calls; the Redisson client is the caller's.
 */
public final class RedisUsageReader {
    public static final int DEFAULT_PAGE_HINT = 1_000;
    private static final String SCRIPT = load("usage_scan.lua");

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final int pageHint;
    private final Duration timeout;

    /** One provisioned PID's usage this month ({@code hasUsage} false: no counter yet, used 0). */
    public record Counter(long used, boolean hasUsage) {}

    /**
     * What one read saw.
     *
     * @param counters per PID id
     * @param roundTrips script calls made (one per page per shard)
     */
    public record Read(QuotaMonth month, Map<String, Counter> counters, int roundTrips) {
        public Read {
            counters = Map.copyOf(counters);
        }

        /** Used per PID, only for PIDs with a counter this month. */
        public Map<String, Long> used() {
            Map<String, Long> used = new HashMap<>(counters.size() * 2);
            counters.forEach((pid, c) -> {
                if (c.hasUsage()) {
                    used.put(pid, c.used());
                }
            });
            return used;
        }
    }

    public RedisUsageReader(RedissonClient redisson, QuotaKeys keys) {
        this(redisson, keys, DEFAULT_PAGE_HINT, Duration.ofSeconds(30));
    }

    /**
     * @param pageHint the {@code HSCAN COUNT} hint: PIDs read per script call (about)
     * @param timeout how long a whole read may take before it fails {@code UNAVAILABLE}
     */
    public RedisUsageReader(RedissonClient redisson, QuotaKeys keys, int pageHint, Duration timeout) {
        this.redisson = requireNonNull(redisson, "redisson");
        this.keys = requireNonNull(keys, "keys");
        requireArgument(
                pageHint >= 1 && pageHint <= 1_000_000, "pageHint", "must be within 1..1000000, was %d", pageHint);
        this.pageHint = pageHint;
        this.timeout = requireNonNull(timeout, "timeout");
    }

    public QuotaKeys keys() {
        return keys;
    }

    /** Every provisioned PID's usage in {@code month}; {@code UNAVAILABLE} if Redis fails. */
    public Read read(QuotaMonth month) {
        requireNonNull(month, "month");
        RScript script = redisson.getScript(StringCodec.INSTANCE);
        AtomicInteger trips = new AtomicInteger();
        List<CompletableFuture<Map<String, Counter>>> shards = new ArrayList<>(keys.shards());
        Map<String, Counter> all = new HashMap<>();
        try {
            for (int shard = 0; shard < keys.shards(); shard++) {
                shards.add(readShard(script, shard, month, trips));
            }
            CompletableFuture.allOf(shards.toArray(CompletableFuture[]::new))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            for (CompletableFuture<Map<String, Counter>> shard : shards) {
                all.putAll(shard.join());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while reading usage from Redis", e);
        } catch (TimeoutException e) {
            shards.forEach(f -> f.cancel(true));
            throw PidPoolException.unavailable("Redis did not answer the usage scan within " + timeout, e);
        } catch (ExecutionException e) {
            throw PidPoolException.unavailable(
                    "could not read usage of cluster " + keys.cluster() + " from Redis: " + e.getCause(), e.getCause());
        } catch (PidPoolException e) {
            throw e;
        } catch (RuntimeException e) { // e.g. the client is shut down: thrown before any future exists
            throw PidPoolException.unavailable(
                    "could not read usage of cluster " + keys.cluster() + " from Redis: " + e, e);
        }
        return new Read(month, all, trips.get());
    }

    private CompletableFuture<Map<String, Counter>> readShard(
            RScript script, int shard, QuotaMonth month, AtomicInteger trips) {
        Map<String, Counter> out = new HashMap<>();
        String prefix = keys.shardPrefix(shard) + "u:";
        String suffix = ":" + month.key();
        return page(script, shard, prefix, suffix, "0", out, trips).thenApply(done -> out);
    }

    private CompletableFuture<Void> page(
            RScript script,
            int shard,
            String prefix,
            String suffix,
            String cursor,
            Map<String, Counter> out,
            AtomicInteger trips) {
        trips.incrementAndGet();
        String pidsKey = keys.pids(shard);
        // READ_WRITE although the script only reads: Redisson sends READ_ONLY as EVALSHA_RO, which
        // Redis 6.2 (the standalone mode's embedded server) does not know
        CompletableFuture<List<Object>> call = script.<List<Object>>evalAsync(
                        pidsKey,
                        RScript.Mode.READ_WRITE,
                        SCRIPT,
                        RScript.ReturnType.MULTI,
                        List.of(pidsKey),
                        prefix,
                        suffix,
                        cursor,
                        Integer.toString(pageHint))
                .toCompletableFuture();
        return call.thenCompose(reply -> {
            String next = parsePage(reply, out);
            return next.equals("0")
                    ? CompletableFuture.completedFuture(null)
                    : page(script, shard, prefix, suffix, next, out, trips);
        });
    }

    /** Fills {@code out} from one script reply; returns the next cursor. */
    static String parsePage(List<Object> reply, Map<String, Counter> out) {
        Objects.requireNonNull(reply, "reply");
        String next = String.valueOf(reply.get(0));
        for (int i = 1; i + 1 < reply.size(); i += 2) {
            String pid = String.valueOf(reply.get(i));
            String used = String.valueOf(reply.get(i + 1));
            out.put(pid, used.isEmpty() ? new Counter(0, false) : new Counter(parseUsed(used), true));
        }
        return next;
    }

    private static long parseUsed(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1; // corrupt: the assembly clamps it and reports the PID
        }
    }

    private static String load(String name) {
        try (InputStream in = RedisUsageReader.class.getResourceAsStream(name)) {
            return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("built-in script " + name + " is unreadable", e);
        }
    }
}
