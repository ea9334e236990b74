package io.pidpool.client.internal.quota;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.port.Ticker;
import io.pidpool.core.quota.DeductResult;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reports held PIDs that have no limit in Redis instead of letting {@code tryAcquire} answer empty
 * without a word. Without a limit a PID grants nothing; for a held PID that means the leader never
 * provisioned it in the Redis (and database) this client reads: a wrong {@code redisDatabase}, a
 * different Redis, another cluster name (docs/sdk.md "Quota").
 *
 * <p>A refusal with limit 0 is the hint; whether the PID's entry in the shard's {@code pids} hash is
 * missing (rather than a provisioned 0) is asked once, asynchronously ({@code HEXISTS} on a Redisson
 * thread, so neither the caller nor the batcher waits), and again at most every {@link
 * #RECHECK_INTERVAL} per PID while it stays unreported. A missing entry is logged at ERROR once per PID
 * and counted ({@link #count()}).
 *
 * <p>Concurrency: thread-safe; the sets are concurrent and a PID is reported by whoever adds it first.
 */
public final class MissingLimits {
    private static final Logger log = LoggerFactory.getLogger(MissingLimits.class);
    /** A PID whose entry was found present is not asked about again for this long. */
    public static final Duration RECHECK_INTERVAL = Duration.ofSeconds(10);

    private final RedissonClient redisson;
    private final QuotaKeys keys;
    private final Ticker ticker;
    private final String where;
    private final Set<String> reported = ConcurrentHashMap.newKeySet();
    private final ConcurrentHashMap<String, Long> nextCheck = new ConcurrentHashMap<>();

    /**
     * @param where how the Redis is named in the report (address and database, never a password)
     */
    public MissingLimits(RedissonClient redisson, QuotaKeys keys, Ticker ticker, String where) {
        this.redisson = requireNonNull(redisson, "redisson");
        this.keys = requireNonNull(keys, "keys");
        this.ticker = requireNonNull(ticker, "ticker");
        this.where = requireNonNull(where, "where");
    }

    /** Looks at a refused deduction of a held PID; never blocks, never throws. */
    public void refused(DeductResult result) {
        if (!(result instanceof DeductResult.Rejected r)
                || r.limit() != 0
                || r.reason() != DeductResult.Reason.QUOTA_EXHAUSTED
                || reported.contains(r.pid())) {
            return;
        }
        String pid = r.pid();
        long now = ticker.read();
        Long due = nextCheck.get(pid);
        if (due != null && now - due < 0) {
            return;
        }
        if (due == null
                ? nextCheck.putIfAbsent(pid, now + RECHECK_INTERVAL.toNanos()) != null
                : !nextCheck.replace(pid, due, now + RECHECK_INTERVAL.toNanos())) {
            return; // another caller checks it now
        }
        try {
            redisson.<String, String>getMap(keys.pids(keys.shardOf(pid)), StringCodec.INSTANCE)
                    .containsKeyAsync(pid)
                    .whenComplete((present, error) -> {
                        if (error == null && !present && reported.add(pid)) {
                            log.error(
                                    "PID {} is held but has no limit in Redis at {} (cluster {}): it grants nothing."
                                            + " The servers provision limits in their Redis; check that this client"
                                            + " uses the same Redis, database and cluster name",
                                    pid,
                                    where,
                                    keys.cluster());
                        }
                    });
        } catch (RuntimeException e) {
            log.debug("could not check the limit of PID {}: {}", pid, e.toString());
        }
    }

    /** Held PIDs found without a limit so far, each counted once. */
    public long count() {
        return reported.size();
    }

    /** Those PIDs. */
    public Set<String> pids() {
        return Set.copyOf(reported);
    }
}
