package io.pidpool.client.internal.quota;

import io.pidpool.core.quota.QuotaMonth;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What every ledger script that writes carries besides its own arguments: who writes (the client id
 * its usage events are attributed to), a fresh incarnation candidate, and when the month's keys
 * expire. Immutable; thread-safe.
 */
final class WriteStamps {
    private final String clientId;
    private final Clock clock;
    private final Duration retention;

    WriteStamps(String clientId, Clock clock, Duration retention) {
        this.clientId = clientId;
        this.clock = clock;
        this.retention = retention;
    }

    String clientId() {
        return clientId;
    }

    /**
     * A fresh incarnation candidate for every script call. The script keeps the shard's existing
     * incarnation and uses the candidate only when the sequence hash is gone; a per-instance
     * candidate would let the same client re-create a lost hash under the incarnation it had before,
     * so restarted sequence numbers would look like the old ones (found by the usage sync's
     * FLUSHALL test). Random rather than {@code UUID.randomUUID()}: no SecureRandom per call.
     */
    static String incarnation() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return new UUID(r.nextLong(), r.nextLong()).toString();
    }

    /** Unix seconds at which a month's keys expire: retention after the later of its end and now. */
    String expireAt(QuotaMonth month) {
        return QuotaKeys.expireAt(month, clock.instant(), retention);
    }
}
