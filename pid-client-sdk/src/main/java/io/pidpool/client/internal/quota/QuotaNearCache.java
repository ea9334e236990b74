package io.pidpool.client.internal.quota;

import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.QuotaMonth;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.redisson.api.RLocalCachedMap;
import org.redisson.api.RedissonClient;
import org.redisson.api.options.LocalCachedMapOptions;
import org.redisson.api.options.LocalCachedMapOptions.ReconnectionStrategy;
import org.redisson.api.options.LocalCachedMapOptions.SyncStrategy;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one client knows about its PIDs' quota without asking Redis: enough to say "clearly not
 * enough" in a few hash lookups, never enough to grant (a grant is always the deduct script's
 * decision).
 *
 * <p><b>Two halves.</b> (1) The shard's PID hash ({@code pid -> "limit|epoch"}) read through a Redisson
 * {@link RLocalCachedMap} ({@link StringCodec}, invalidate-on-change, {@link ReconnectionStrategy#CLEAR}
 * on reconnect, entries live at most {@code metaTtl}), shared with the other near caches of this JVM
 * on the same Redisson client ({@link SharedLocalMaps}). (2) The last <em>observation</em> of each PID's
 * usage, taken from the answer of every script this client ran: {@code (month, used, limit, epoch,
 * when)}. Scripts do not notify Redisson local caches, so usage is never put into the RLocalCachedMap;
 * the client records what its own scripts returned instead.
 *
 * <p><b>When an observation is trusted.</b> {@link #remaining} answers only if the observation is for
 * the asked month, younger than {@code maxObservationAge}, and its epoch equals the epoch of the
 * PID's entry in the local cache. Every operator write that can <em>raise</em> what is left (a limit
 * change or a reset) bumps the epoch inside its script and then broadcasts an invalidation through the
 * map API ({@link #publish}); so after a reset a client's old observation no longer matches as soon as
 * the invalidation arrives (~1 ms on a LAN) or, if the invalidation is lost while the client is
 * disconnected, as soon as the client resubscribes (the CLEAR strategy empties the local cache, and
 * the re-read entry carries the new epoch), or at the latest after {@code metaTtl} (a lost invalidation
 * racing with a load). Writes that lower what is left need no invalidation: a stale observation then
 * only sends the client to Redis, which answers correctly. Refunds made by another client raise what
 * is left without an epoch bump; {@code maxObservationAge} bounds that staleness.
 *
 * <p><b>Concurrency.</b> Thread-safe. Observations are a {@link ConcurrentHashMap} written by whichever
 * thread ran a script (last writer wins; a reordered older observation can only be optimistic or
 * expire). The per-shard maps are created lazily, once, by compare-and-set into an array.
 */
public final class QuotaNearCache implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(QuotaNearCache.class);
    /** One observation of a PID's usage, as a script reported it. */
    record Observation(QuotaMonth month, long used, long limit, long epoch, long atNanos) {}

    /** A parsed PID entry; {@code raw} is the exact string instance the local cache holds. */
    private record Meta(String raw, long limit, long epoch) {}

    private static final class Shard {
        final RLocalCachedMap<String, String> map;
        final Map<String, String> local;

        Shard(RLocalCachedMap<String, String> map) {
            this.map = map;
            this.local = map.getCachedMap();
        }
    }

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final Ticker ticker;
    private final long maxObservationAgeNanos;
    private final Duration metaTtl;
    private final ReconnectionStrategy reconnectionStrategy;
    private final AtomicReferenceArray<Shard> shards;
    private final Map<String, Observation> observations = new ConcurrentHashMap<>();
    private final Map<String, Meta> parsed = new ConcurrentHashMap<>();
    /** pid -> its shard's near map: saves the crc32 on the hot path. */
    private final Map<String, Shard> shardOfPid = new ConcurrentHashMap<>();

    private final Set<String> loading = ConcurrentHashMap.newKeySet();

    QuotaNearCache(
            RedissonClient redisson,
            QuotaKeys keys,
            Ticker ticker,
            Duration maxObservationAge,
            Duration metaTtl,
            ReconnectionStrategy reconnectionStrategy) {
        this.redisson = redisson;
        this.keys = keys;
        this.ticker = ticker;
        this.maxObservationAgeNanos = maxObservationAge.toNanos();
        this.metaTtl = metaTtl;
        this.reconnectionStrategy = reconnectionStrategy;
        this.shards = new AtomicReferenceArray<>(keys.shards());
    }

    /**
     * Commands {@code pid} certainly had left in {@code month} at its last trusted observation, or
     * empty when this client has no trusted observation (then only Redis knows). Never blocks; on a
     * local-cache miss it starts loading the PID's entry in the background.
     */
    public OptionalLong remaining(String pid, QuotaMonth month) {
        Observation o = observations.get(pid);
        if (o == null || !o.month().equals(month) || ticker.read() - o.atNanos() > maxObservationAgeNanos) {
            return OptionalLong.empty();
        }
        Meta m = meta(pid);
        if (m == null || m.epoch() != o.epoch()) {
            return OptionalLong.empty();
        }
        return OptionalLong.of(Math.max(0, m.limit() - o.used()));
    }

    /** Whether {@code pid} clearly cannot give {@code n} commands in {@code month} (see {@link #remaining}). */
    public boolean clearlyNotEnough(String pid, QuotaMonth month, long n) {
        OptionalLong left = remaining(pid, month);
        return left.isPresent() && left.getAsLong() < n;
    }

    /** The PID's hard limit as the local cache holds it, if it holds it. */
    public OptionalLong cachedLimit(String pid) {
        Meta m = meta(pid);
        return m == null ? OptionalLong.empty() : OptionalLong.of(m.limit());
    }

    /** Records what a script answered about {@code pid}. */
    void observe(String pid, QuotaMonth month, long used, long limit, long epoch) {
        observations.put(pid, new Observation(month, used, limit, epoch, ticker.read()));
    }

    /** Forgets what this client observed about {@code pid} (e.g. after it lost the PID). */
    public void forget(String pid) {
        observations.remove(pid);
    }

    /**
     * Broadcasts that {@code pid}'s entry changed to {@code value} (which a script just wrote): a
     * compare-and-set of the value onto itself through the map API, so Redisson publishes the
     * invalidation to every client. If the entry has changed again since, the later writer broadcasts
     * instead; an older value is never written back.
     */
    void publish(String pid, String value) {
        try {
            shard(keys.shardOf(pid)).map.replace(pid, value, value);
        } catch (RuntimeException e) {
            throw QuotaScripts.translate("broadcasting the change of PID " + pid + " to near caches", e);
        }
    }

    /** {@link #publish} without waiting: many broadcasts go out pipelined; the future fails raw. */
    CompletableFuture<Boolean> publishAsync(String pid, String value) {
        return shard(keys.shardOf(pid)).map.replaceAsync(pid, value, value).toCompletableFuture();
    }

    /**
     * The PID's parsed entry from the local cache, or {@code null} when it is not there (a load is
     * then started in the background) or Redis cannot be reached: "unknown", never an exception.
     */
    private Meta meta(String pid) {
        String raw;
        try {
            Shard shard = shardOfPid.get(pid);
            if (shard == null) {
                shard = shard(keys.shardOf(pid));
                shardOfPid.put(pid, shard);
            }
            raw = shard.local.get(pid);
            if (raw == null) {
                if (loading.add(pid)) {
                    shard.map.getAsync(pid).whenComplete((v, e) -> loading.remove(pid));
                }
                return null;
            }
        } catch (RuntimeException e) {
            // creating a shard's map or starting a load talks to Redis; an outage only means "unknown"
            loading.remove(pid);
            log.debug("near cache entry of PID {} unavailable: {}", pid, e.toString());
            return null;
        }
        Meta m = parsed.get(pid);
        if (m == null || m.raw() != raw) {
            m = parse(raw);
            parsed.put(pid, m);
        }
        return m;
    }

    private static Meta parse(String raw) {
        int bar = raw.indexOf('|');
        if (bar < 0) {
            return new Meta(raw, 0, -1);
        }
        try {
            return new Meta(raw, Long.parseLong(raw, 0, bar, 10), Long.parseLong(raw, bar + 1, raw.length(), 10));
        } catch (NumberFormatException e) {
            // never matches an observation's epoch, so it is never trusted
            return new Meta(raw, 0, -1);
        }
    }

    /** The shard's map, created on first use (which talks to Redis, so it may throw). */
    private Shard shard(int s) {
        Shard shard = shards.get(s);
        if (shard == null) {
            LocalCachedMapOptions<String, String> options = LocalCachedMapOptions.<String, String>name(keys.pids(s))
                    .codec(StringCodec.INSTANCE)
                    .syncStrategy(SyncStrategy.INVALIDATE)
                    .reconnectionStrategy(reconnectionStrategy)
                    .timeToLive(metaTtl)
                    .useObjectAsCacheKey(true);
            Shard created =
                    new Shard(SharedLocalMaps.acquire(redisson, keys.pids(s), metaTtl, reconnectionStrategy, options));
            if (shards.compareAndSet(s, null, created)) {
                shard = created;
            } else {
                SharedLocalMaps.release(redisson, keys.pids(s), metaTtl, reconnectionStrategy);
                shard = shards.get(s);
            }
        }
        return shard;
    }

    /** Drops the local caches and their subscriptions (not the data in Redis). */
    @Override
    public void close() {
        for (int s = 0; s < shards.length(); s++) {
            Shard shard = shards.getAndSet(s, null);
            if (shard != null) {
                SharedLocalMaps.release(redisson, keys.pids(s), metaTtl, reconnectionStrategy);
            }
        }
        observations.clear();
        parsed.clear();
        shardOfPid.clear();
    }
}
