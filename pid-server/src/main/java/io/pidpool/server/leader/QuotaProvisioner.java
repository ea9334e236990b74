package io.pidpool.server.leader;

import io.pidpool.core.model.Epoch;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * Where the leader provisions the PIDs' quota: the Redis quota ledger in production ({@code
 * io.pidpool.server.redis.RedisQuotaProvisioner}), {@link #logging()} where no ledger is wired.
 *
 * <p>The leader calls it from {@code QuotaSync}'s own thread, never inside a database transaction and
 * only with committed state; every call must be idempotent in its effect (a call may be repeated after
 * a failure whose outcome is unknown, and a new leader provisions everything again).
 *
 * <p>Implementations must be thread-safe; a call that fails throws {@link
 * io.pidpool.core.error.PidPoolException} ({@code UNAVAILABLE} for an unreachable store) and is retried.
 */
public interface QuotaProvisioner {
    /**
     * Sets each PID's hard limit ({@link io.pidpool.core.model.PidRecord#hardLimit()}: monthly quota
     * plus overage allowance); {@code 0} for a deleted PID, which then grants nothing. Fenced by the
     * leader's epoch: a store that has seen a newer epoch refuses the write.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} if a newer leader has written limits
     *     or fenced them (limits written before the refused one may have been written)
     */
    void setLimits(Map<String, Long> hardLimits, Epoch leaderEpoch);

    /**
     * A new term's first step: the store refuses every limit write of an epoch older than {@code
     * leaderEpoch} from now on. Default: nothing (a store without epochs).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code FENCED} if a newer epoch is recorded
     */
    default void fenceLimits(Epoch leaderEpoch) {}

    /** RESET_QUOTA: forgets the PIDs' usage in the quota month that contains {@code at}. */
    void reset(Collection<String> pidIds, Instant at);

    /**
     * A durable RESET_QUOTA ({@link io.pidpool.core.port.QuotaResetLog}): resets the PID's month that
     * contains {@code at} only if the store has not applied {@code generation} (or a newer one) yet, and
     * records it with the reset, atomically. Default: an unguarded {@link #reset} (stores without
     * generations).
     *
     * @return whether the reset happened now
     */
    default boolean resetOnce(String pidId, long generation, Instant at) {
        reset(List.of(pidId), at);
        return true;
    }

    /** The highest reset generation the store applied per PID (absent: none). Default: none known. */
    default Map<String, Long> resetGenerations() {
        return Map.of();
    }

    /**
     * Every hard limit the store holds (for reconciliation), a malformed entry as {@code -1}; PIDs the
     * store never saw are absent.
     */
    Map<String, Long> limits();

    /** Provisions nothing and says so in the log (tests and servers without Redis). */
    static QuotaProvisioner logging() {
        return new LoggingQuotaProvisioner();
    }
}
