package io.pidpool.server.config;

/**
 * Everything one pid-server process needs to join a cluster: the bound form of {@code server.yml}
 * after defaults and environment overrides. Build it with {@link ConfigLoader}; a value built in
 * code (as {@code standalone} does) should pass {@link ConfigLoader#validate(ServerConfig)}.
 *
 * @param cluster the cluster name: ZooKeeper namespace {@code /pidpool/<cluster>}
 * @param leader account-health knobs of the leader (cooldown)
 */
public record ServerConfig(
        String cluster,
        HttpConfig http,
        ZooKeeperConfig zookeeper,
        RedisConfig redis,
        DatabaseConfig database,
        SecurityConfig security,
        WorkerConfig worker,
        LeaderConfig leader) {

    /** A configuration with the default {@link LeaderConfig}. */
    public ServerConfig(
            String cluster,
            HttpConfig http,
            ZooKeeperConfig zookeeper,
            RedisConfig redis,
            DatabaseConfig database,
            SecurityConfig security,
            WorkerConfig worker) {
        this(cluster, http, zookeeper, redis, database, security, worker, LeaderConfig.defaults());
    }
}
