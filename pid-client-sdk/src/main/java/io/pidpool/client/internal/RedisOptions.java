package io.pidpool.client.internal;

import java.time.Duration;

/**
 * How the client reaches Redis when it builds its own Redisson client: the options of the servers'
 * {@code redis} section (docs/sdk.md "Quota"). Public only because the builder lives in another
 * package; not an API.
 *
 * @param database the Redis database index of a single server ({@code redis.database}); 0 by default
 * @param timeout connect and response timeout of a single server
 * @param configYaml a Redisson YAML configuration ({@code redis.redisson}: cluster, sentinel, TLS,
 *     timeouts and every other Redisson setting) instead of an address; {@code null}: none
 * @param acquireTimeout the longest a {@code tryAcquire} caller waits for Redis, whatever client
 */
public record RedisOptions(int database, Duration timeout, String configYaml, Duration acquireTimeout) {
    /** The single-server defaults: database 0, 3 s timeouts, callers wait at most 1 s. */
    public static final RedisOptions DEFAULTS = new RedisOptions(0, Duration.ofSeconds(3), null, Duration.ofSeconds(1));

    @Override
    public String toString() {
        // the YAML may hold a password: never printed
        return "RedisOptions[database=" + database + ", timeout=" + timeout + ", configYaml="
                + (configYaml == null ? "(none)" : "(given)") + ", acquireTimeout=" + acquireTimeout + "]";
    }
}
