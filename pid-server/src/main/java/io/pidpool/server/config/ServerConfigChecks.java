package io.pidpool.server.config;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.server.config.ConfigException.Problem;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import org.redisson.config.Config;

/**
 * The rules a bound {@link ServerConfig} must keep, whether it came from {@code server.yml} or was
 * built in code: ranges, required keys, the shape of addresses and urls, the keyring and the tokens.
 * Messages name the key and never repeat a secret value; the {@code advice} and {@code monitoring}
 * blocks bring their own rules ({@link AdviceConfig#problems}, {@link MonitoringChecks}).
 */
final class ServerConfigChecks {
    private static final Pattern REDIS_ADDRESS = Pattern.compile("rediss?://[^\\s/:]+:\\d{1,5}");
    private static final Pattern NO_SPACE = Pattern.compile("\\S+");
    private static final long MAX_REQUEST_BYTES_LIMIT = 64L << 20;

    private ServerConfigChecks() {}

    /**
     * Checks every rule, fills default token names and returns the config; throws one {@link
     * ConfigException} with every problem found, each message followed by {@code sourceOf(key)}.
     */
    static ServerConfig validate(ServerConfig c, UnaryOperator<String> sourceOf) {
        List<Problem> problems = new ArrayList<>();
        Checker check = (ok, key, message) -> {
            if (!ok) {
                problems.add(new Problem(key, message + sourceOf.apply(key)));
            }
        };

        check.require(c.cluster() != null && !c.cluster().isBlank(), "cluster", "is required");
        if (c.cluster() != null && !c.cluster().isBlank()) {
            try {
                Names.requireToken(c.cluster(), "cluster");
            } catch (PidPoolException e) {
                check.require(false, "cluster", "must be 1-64 characters of [A-Za-z0-9_.-], was '" + c.cluster() + "'");
            }
        }

        HttpConfig http = c.http();
        check.require(http.host() != null && !http.host().isBlank(), "http.host", "is required");
        check.require(
                http.port() >= 0 && http.port() <= 65535,
                "http.port",
                "must be within 0..65535 (0 picks a free port), was " + http.port());
        check.require(
                http.maxRequestBytes() >= 1024 && http.maxRequestBytes() <= MAX_REQUEST_BYTES_LIMIT,
                "http.maxRequestBytes",
                "must be within 1024.." + MAX_REQUEST_BYTES_LIMIT + ", was " + http.maxRequestBytes());

        ZooKeeperConfig zk = c.zookeeper();
        if (blank(zk.connect())) {
            check.require(false, "zookeeper.connect", "is required, e.g. zk1:2181,zk2:2181,zk3:2181");
        } else {
            check.require(
                    NO_SPACE.matcher(zk.connect()).matches(),
                    "zookeeper.connect",
                    "must be host:port[,host:port...] without spaces, was '" + zk.connect() + "'");
        }
        check.require(
                zk.sessionTimeoutMs() >= 1000 && zk.sessionTimeoutMs() <= 600_000,
                "zookeeper.sessionTimeoutMs",
                "must be within 1000..600000, was " + zk.sessionTimeoutMs());
        check.require(
                zk.connectionTimeoutMs() >= 100 && zk.connectionTimeoutMs() <= 600_000,
                "zookeeper.connectionTimeoutMs",
                "must be within 100..600000, was " + zk.connectionTimeoutMs());

        RedisConfig redis = c.redis();
        if (redis.usesRedissonBlock()) {
            check.require(blank(redis.address()), "redis", "set either redis.address or redis.redisson, not both");
            String problem = redissonProblem(redis.redisson());
            check.require(problem == null, "redis.redisson", "is not a valid Redisson configuration: " + problem);
        } else if (blank(redis.address())) {
            check.require(
                    false, "redis.address", "is required (or a redis.redisson block), e.g. redis://127.0.0.1:6379");
        } else {
            check.require(
                    REDIS_ADDRESS.matcher(redis.address()).matches(),
                    "redis.address",
                    "must look like redis://host:port or rediss://host:port, was '" + redis.address() + "'");
        }
        check.require(redis.password() != null, "redis.password", "must be text (empty for none)");
        check.require(redis.database() >= 0, "redis.database", "must be >= 0, was " + redis.database());

        DatabaseConfig db = c.database();
        if (blank(db.url())) {
            check.require(false, "database.url", "is required, e.g. jdbc:postgresql://db:5432/pidpool");
        } else {
            check.require(db.url().startsWith("jdbc:"), "database.url", "must be a JDBC url starting with jdbc:");
        }
        check.require(db.user() != null, "database.user", "must be text (empty when the url carries it)");
        check.require(db.password() != null, "database.password", "must be text (empty for none)");
        check.require(
                db.maxPoolSize() >= 1 && db.maxPoolSize() <= 500,
                "database.maxPoolSize",
                "must be within 1..500, was " + db.maxPoolSize());

        if (!blank(zk.auth())) {
            try {
                ZkAuth.digest(zk.auth().strip()); // never echoes the password
            } catch (PidPoolException e) {
                check.require(false, "zookeeper.auth", "must be user:password (ZooKeeper digest), non-empty both");
            }
        }

        SecurityConfig security = c.security();
        try {
            security.sealer(); // the keyring's own rules; never echoes a key
        } catch (PidPoolException e) {
            String key = e.field() == null ? "security.secretKey" : e.field();
            check.require(false, key, e.getMessage());
        }
        List<TokenConfig> tokens = new ArrayList<>();
        check.require(
                !security.tokens().isEmpty(),
                "security.tokens",
                "needs at least one token, e.g. [{token: \"<32 random characters>\", role: admin}]");
        Set<String> seenTokens = new HashSet<>();
        Set<String> seenNames = new HashSet<>();
        for (int i = 0; i < security.tokens().size(); i++) {
            TokenConfig t = security.tokens().get(i);
            String at = "security.tokens[" + i + "]";
            if (t == null) {
                check.require(false, at, "is empty");
                continue;
            }
            check.require(t.role() != null, at + ".role", "is required: one of viewer, operator, admin");
            if (t.token() == null) {
                check.require(false, at + ".token", "is required");
            } else {
                check.require(
                        t.token().length() >= 16 && t.token().length() <= 512,
                        at + ".token",
                        "must be 16..512 characters long, is " + t.token().length());
                check.require(NO_SPACE.matcher(t.token()).matches(), at + ".token", "must not contain whitespace");
                check.require(seenTokens.add(t.token()), at + ".token", "repeats an earlier token");
            }
            String name = t.name() != null
                    ? t.name()
                    : (t.role() == null ? "token" : t.role().name().toLowerCase(Locale.ROOT)) + "-" + i;
            try {
                Names.requireToken(name, "name");
                check.require(seenNames.add(name), at + ".name", "repeats an earlier name '" + name + "'");
            } catch (PidPoolException e) {
                check.require(false, at + ".name", "must be 1-64 characters of [A-Za-z0-9_.-], was '" + name + "'");
            }
            tokens.add(new TokenConfig(name, t.token(), t.role()));
        }
        check.require(c.worker() != null, "worker.enabled", "is required");
        AdviceConfig.problems(c.advice())
                .forEach(p -> problems.add(new Problem(p.key(), p.message() + sourceOf.apply(p.key()))));
        MonitoringChecks.check(c.monitoring(), check::require);

        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
        return new ServerConfig(
                c.cluster(), http, zk, redis, db, security.withTokens(tokens), c.worker(), c.advice(), c.monitoring());
    }

    @FunctionalInterface
    private interface Checker {
        void require(boolean ok, String key, String message);
    }

    private static String redissonProblem(Map<String, Object> block) {
        try {
            String text = new YAMLMapper().writeValueAsString(block);
            Config.fromYAML(text);
            return null;
        } catch (JsonMappingException e) {
            String key = BindingErrors.pathOf(e);
            return key.isEmpty() ? "unreadable block" : "unknown or wrongly typed key '" + key + "'";
        } catch (IOException | RuntimeException e) {
            return "unreadable block (" + e.getClass().getSimpleName() + ")";
        }
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
