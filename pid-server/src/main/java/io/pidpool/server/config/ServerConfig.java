package io.pidpool.server.config;

/**
 * Everything one pid-server process needs to join a cluster: the bound form of {@code server.yml}
 * after defaults and environment overrides. Build it with {@link ConfigLoader}; a value built in
 * code (as {@code standalone} does) should pass {@link ConfigLoader#validate(ServerConfig)}.
 *
 * @param cluster the cluster name: ZooKeeper namespace {@code /pidpool/<cluster>}
 * @param advice alert thresholds, webhook, tariff and recommendations ({@code docs/alerts.md})
 * @param monitoring usage sync and monitoring; {@link MonitoringConfig#defaults()} when built without
 */
public record ServerConfig(
        String cluster,
        HttpConfig http,
        ZooKeeperConfig zookeeper,
        RedisConfig redis,
        DatabaseConfig database,
        SecurityConfig security,
        EmbeddedWorkerConfig worker,
        AdviceConfig advice,
        MonitoringConfig monitoring) {
    public ServerConfig {
        advice = advice == null ? AdviceConfig.defaults() : advice;
        monitoring = monitoring == null ? MonitoringConfig.defaults() : monitoring;
    }

    /** Without advice and monitoring blocks: the defaults. */
    public ServerConfig(
            String cluster,
            HttpConfig http,
            ZooKeeperConfig zookeeper,
            RedisConfig redis,
            DatabaseConfig database,
            SecurityConfig security,
            EmbeddedWorkerConfig worker) {
        this(cluster, http, zookeeper, redis, database, security, worker, null, null);
    }
}
