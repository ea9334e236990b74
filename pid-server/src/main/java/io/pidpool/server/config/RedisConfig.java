package io.pidpool.server.config;

import java.util.Map;

/**
 * Redis, reached through Redisson. Either {@code address} (+ {@code password}, {@code database})
 * for one server, or {@code redisson}: a Redisson configuration block passed through verbatim
 * (for {@code clusterServersConfig}, {@code sentinelServersConfig} and every other Redisson
 * setting). The two forms exclude each other.
 *
 * @param address {@code redis://host:port} or {@code rediss://host:port}
 * @param password empty for none; never logged
 * @param database the Redis database index (single server only)
 * @param redisson a Redisson YAML configuration as a tree, or {@code null}
 */
public record RedisConfig(String address, String password, int database, Map<String, Object> redisson) {
    public RedisConfig {
        redisson = redisson == null
                ? null
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(redisson));
    }

    /** Whether the Redisson passthrough block is used instead of {@code address}. */
    public boolean usesRedissonBlock() {
        return redisson != null;
    }

    @Override
    public String toString() {
        return "RedisConfig[address=" + address + ", password=" + (isBlank(password) ? "(none)" : "***") + ", database="
                + database + ", redisson=" + (redisson == null ? "(none)" : "(block)") + "]";
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
