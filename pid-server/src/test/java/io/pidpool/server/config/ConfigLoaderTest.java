package io.pidpool.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.pidpool.core.error.ErrorCode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ConfigLoaderTest {
    static final String KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="; // 32 bytes
    static final String TOKEN = "t0k3n-abcdefghijklmnop";

    /** docs/design.md §7's example, with values that pass validation. */
    static final String DESIGN_EXAMPLE =
            """
            cluster: default
            http:      { port: 8080 }
            zookeeper: { connect: "zk1:2181,zk2:2181,zk3:2181", sessionTimeoutMs: 5000 }
            redis:     { address: "redis://127.0.0.1:6379", password: "" }
            database:  { url: "jdbc:postgresql://db:5432/pidpool", user: "pidpool", password: "db-pass-42" }
            security:  { secretKey: "%s", tokens: [ { token: "%s", role: admin } ] }
            """
                    .formatted(KEY, TOKEN);

    static ServerConfig load(String yaml, Map<String, String> env) {
        return new ConfigLoader(env).load(yaml, "server.yml");
    }

    static ConfigException fail(String yaml, Map<String, String> env) {
        return catchThrowableOfType(ConfigException.class, () -> load(yaml, env));
    }

    @Test
    void designExampleLoadsWithDefaults() {
        ServerConfig c = load(DESIGN_EXAMPLE, Map.of());
        assertThat(c.cluster()).isEqualTo("default");
        assertThat(c.http()).isEqualTo(new HttpConfig("0.0.0.0", 8080, 1 << 20));
        assertThat(c.zookeeper()).isEqualTo(new ZooKeeperConfig("zk1:2181,zk2:2181,zk3:2181", 5000, 15000));
        assertThat(c.redis().address()).isEqualTo("redis://127.0.0.1:6379");
        assertThat(c.redis().usesRedissonBlock()).isFalse();
        assertThat(c.database())
                .isEqualTo(new DatabaseConfig("jdbc:postgresql://db:5432/pidpool", "pidpool", "db-pass-42", 10));
        assertThat(c.security().secretKey()).isEqualTo(KEY);
        assertThat(c.security().tokens()).containsExactly(new TokenConfig("admin-0", TOKEN, Role.ADMIN));
        assertThat(c.worker().enabled()).isTrue();
    }

    @Test
    void environmentOverridesTheFile() {
        Map<String, String> env = Map.of(
                "PIDPOOL_ZOOKEEPER_CONNECT", "zk9:2181",
                "PIDPOOL_ZOOKEEPER_SESSION_TIMEOUT_MS", "9000",
                "PIDPOOL_HTTP_PORT", "9090",
                "PIDPOOL_DATABASE_URL", "jdbc:mariadb://db:3306/pidpool",
                "PIDPOOL_DATABASE_PASSWORD", "from-env",
                "PIDPOOL_SECURITY_TOKENS",
                        "[{name: ci, token: \"" + TOKEN + "-ci\", role: OPERATOR}, {token: \"" + TOKEN
                                + "-v\", role: viewer}]",
                "PIDPOOL_WORKER_ENABLED", "false",
                "PIDPOOL_CLUSTER", "blue");
        ServerConfig c = load(DESIGN_EXAMPLE, env);
        assertThat(c.zookeeper().connect()).isEqualTo("zk9:2181");
        assertThat(c.zookeeper().sessionTimeoutMs()).isEqualTo(9000);
        assertThat(c.http().port()).isEqualTo(9090);
        assertThat(c.database().url()).isEqualTo("jdbc:mariadb://db:3306/pidpool");
        assertThat(c.database().user()).isEqualTo("pidpool"); // from the file
        assertThat(c.database().password()).isEqualTo("from-env");
        assertThat(c.security().tokens())
                .containsExactly(
                        new TokenConfig("ci", TOKEN + "-ci", Role.OPERATOR),
                        new TokenConfig("viewer-1", TOKEN + "-v", Role.VIEWER));
        assertThat(c.worker().enabled()).isFalse();
        assertThat(c.cluster()).isEqualTo("blue");
    }

    @Test
    void theEnvironmentAloneIsEnough() {
        Map<String, String> env = Map.of(
                "PIDPOOL_ZOOKEEPER_CONNECT", "127.0.0.1:2181",
                "PIDPOOL_REDIS_ADDRESS", "redis://127.0.0.1:6379",
                "PIDPOOL_DATABASE_URL", "jdbc:h2:mem:x",
                "PIDPOOL_SECURITY_SECRET_KEY", KEY,
                "PIDPOOL_SECURITY_TOKENS", "[{token: \"" + TOKEN + "\", role: admin}]",
                "PIDPOOL_TEST_POSTGRES_URL", "jdbc:postgresql://ignored",
                "PIDPOOL_NOT_A_KEY", "ignored");
        ServerConfig c = load("", env);
        assertThat(c.zookeeper().connect()).isEqualTo("127.0.0.1:2181");
        assertThat(c.security().tokens()).hasSize(1);
    }

    static final String OTHER_KEY = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA="; // 32 bytes

    /** A valid value for every key; the test fails when a key is added without one here. */
    static final Map<String, String> VALID_ENV_VALUES = Map.ofEntries(
            Map.entry("cluster", "green"),
            Map.entry("http.host", "127.0.0.1"),
            Map.entry("http.port", "8181"),
            Map.entry("http.maxRequestBytes", "2048"),
            Map.entry("http.metricsRequireToken", "true"),
            Map.entry("zookeeper.connect", "zkx:2181"),
            Map.entry("zookeeper.sessionTimeoutMs", "7000"),
            Map.entry("zookeeper.connectionTimeoutMs", "3000"),
            Map.entry("zookeeper.auth", "pidpool:zk-pass"),
            Map.entry("redis.address", "rediss://cache:6380"),
            Map.entry("redis.password", "redis-pass"),
            Map.entry("redis.database", "2"),
            Map.entry("redis.redisson", "null"),
            Map.entry("database.url", "jdbc:h2:mem:y"),
            Map.entry("database.user", "someone"),
            Map.entry("database.password", "pw"),
            Map.entry("database.maxPoolSize", "3"),
            Map.entry("security.secretKey", "MDEyMzQ1Njc4OWFiY2RlZg=="),
            Map.entry("security.secretKeys", "{x: " + OTHER_KEY + "}"),
            Map.entry("security.currentKeyId", "x"),
            Map.entry("security.tokens", "[{name: x, token: \"" + TOKEN + "-x\", role: viewer}]"),
            Map.entry("worker.enabled", "false"),
            Map.entry("advice.evaluateIntervalMs", "5000"),
            Map.entry("advice.utilisationPercents", "[70, 95]"),
            Map.entry("advice.pidUtilisation", "false"),
            Map.entry("advice.projectedCostAbove", "7.5"),
            Map.entry("advice.maxPidAlerts", "50"),
            Map.entry("advice.cooldownAfterFailures", "4"),
            Map.entry("advice.cooldownMs", "120000"),
            Map.entry("advice.massFailureShare", "0.25"),
            Map.entry("advice.rebalanceDelayMs", "15000"),
            Map.entry("advice.tariff", "[{size: 500, unitPrice: 0.05}, {unitPrice: 0.07}]"),
            Map.entry("advice.webhook.url", "http://hook:9000/x"),
            Map.entry("advice.webhook.maxAttempts", "3"),
            Map.entry("advice.webhook.timeoutMs", "1500"),
            Map.entry("advice.recommendations.maxMoves", "9"),
            Map.entry("advice.recommendations.minSavingPerMove", "0.5"),
            Map.entry("advice.autoApply.enabled", "true"),
            Map.entry("advice.autoApply.maxMovesPerInterval", "7"),
            Map.entry("advice.autoApply.intervalMs", "60000"),
            Map.entry("advice.autoApply.onEstimatedUsage", "true"),
            Map.entry("monitoring.syncIntervalMs", "700"),
            Map.entry("monitoring.scanIntervalMs", "9000"));

    @Test
    void everyKeyHasAnEnvironmentVariableThatTakesEffect() {
        assertThat(EnvironmentKeys.all().stream().map(EnvironmentKeys.Key::path))
                .containsExactlyInAnyOrderElementsOf(VALID_ENV_VALUES.keySet());
        ServerConfig base = load(DESIGN_EXAMPLE, Map.of());
        for (EnvironmentKeys.Key key : EnvironmentKeys.all()) {
            String value = VALID_ENV_VALUES.get(key.path());
            Map<String, String> env = new HashMap<>(Map.of(key.envName(), value));
            if (key.path().equals("security.currentKeyId")) {
                env.put("PIDPOOL_SECURITY_SECRET_KEYS", VALID_ENV_VALUES.get("security.secretKeys"));
            }
            ServerConfig c = load(DESIGN_EXAMPLE, env);
            Object before = valueAt(base, key.path());
            Object after = valueAt(c, key.path());
            if (!key.path().equals("redis.redisson")) {
                assertThat(after).as(key.envName()).isNotEqualTo(before);
                assertThat(String.valueOf(after)).as(key.envName()).contains(firstWord(value));
            }
        }
    }

    private static String firstWord(String value) {
        if (value.startsWith("[{name") || value.startsWith("{")) {
            return "x";
        }
        if (value.startsWith("[{")) {
            return "size";
        }
        return value.startsWith("[") ? value.substring(1).split("[,\\]]")[0].trim() : value;
    }

    private static Object valueAt(ServerConfig c, String path) {
        Object node = c;
        for (String part : path.split("\\.")) {
            try {
                node = node.getClass().getMethod(part).invoke(node);
            } catch (ReflectiveOperationException e) {
                throw new AssertionError(path, e);
            }
        }
        return node instanceof List<?> l
                ? l.stream()
                        .map(t -> t instanceof TokenConfig token ? token.name() : String.valueOf(t))
                        .toList()
                : node;
    }

    @Test
    void redissonBlockIsPassedThrough() {
        String yaml = DESIGN_EXAMPLE.replace(
                "redis:     { address: \"redis://127.0.0.1:6379\", password: \"\" }",
                """
                redis:
                  redisson:
                    clusterServersConfig:
                      nodeAddresses: ["redis://10.0.0.1:7000", "redis://10.0.0.2:7000"]
                      password: "cluster-pass"
                """);
        ServerConfig c = load(yaml, Map.of());
        assertThat(c.redis().usesRedissonBlock()).isTrue();
        assertThat(c.redis().redisson()).containsKey("clusterServersConfig");
        assertThat(c.redis().toString()).doesNotContain("cluster-pass");
    }

    @Test
    void toStringNeverShowsSecrets() {
        ServerConfig c = load(DESIGN_EXAMPLE, Map.of("PIDPOOL_REDIS_PASSWORD", "redis-secret"));
        assertThat(c.toString())
                .doesNotContain(KEY)
                .doesNotContain(TOKEN)
                .doesNotContain("db-pass-42")
                .doesNotContain("redis-secret");
    }

    @Test
    void missingFileNamesTheFile(@TempDir Path dir) {
        Path file = dir.resolve("server.yml");
        assertThatThrownBy(() -> new ConfigLoader(Map.of()).load(file))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("does not exist");
    }

    @Test
    void loadsFromAFile(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("server.yml"), DESIGN_EXAMPLE);
        assertThat(new ConfigLoader(Map.of()).load(file).zookeeper().connect()).isEqualTo("zk1:2181,zk2:2181,zk3:2181");
    }

    static Stream<Arguments> invalidConfigs() {
        Function<String[], String> edit = pair -> DESIGN_EXAMPLE.replace(pair[0], pair[1]);
        return Stream.of(
                Arguments.of(
                        edit.apply(new String[] {"connect: \"zk1:2181,zk2:2181,zk3:2181\", ", ""}),
                        Map.of(),
                        "zookeeper.connect",
                        "required"),
                Arguments.of(edit.apply(new String[] {"port: 8080", "port: 70000"}), Map.of(), "http.port", "0..65535"),
                Arguments.of(DESIGN_EXAMPLE, Map.of("PIDPOOL_HTTP_PORT", "abc"), "http.port", "PIDPOOL_HTTP_PORT"),
                Arguments.of(DESIGN_EXAMPLE, Map.of("PIDPOOL_HTTP_PORT", ""), "http.port", "PIDPOOL_HTTP_PORT"),
                Arguments.of(edit.apply(new String[] {"port: 8080", "port: 80.5"}), Map.of(), "http.port", "integer"),
                Arguments.of(
                        edit.apply(new String[] {"port: 8080", "prot: 8080"}), Map.of(), "http.prot", "unknown key"),
                Arguments.of("zookeper: {connect: x}\n" + DESIGN_EXAMPLE, Map.of(), "zookeper", "unknown key"),
                Arguments.of(
                        edit.apply(new String[] {"sessionTimeoutMs: 5000", "sessionTimeoutMs: 10"}),
                        Map.of(),
                        "zookeeper.sessionTimeoutMs",
                        "1000..600000"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_ZOOKEEPER_CONNECT", "zk1:2181, zk2:2181"),
                        "zookeeper.connect",
                        "without spaces"),
                Arguments.of(
                        edit.apply(new String[] {"address: \"redis://127.0.0.1:6379\", ", ""}),
                        Map.of(),
                        "redis.address",
                        "required"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_REDIS_ADDRESS", "127.0.0.1:6379"),
                        "redis.address",
                        "redis://host:port"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_REDIS_REDISSON", "{singleServerConfig: {address: \"redis://x:1\"}}"),
                        "redis",
                        "not both"),
                Arguments.of(
                        edit.apply(new String[] {"address: \"redis://127.0.0.1:6379\", ", ""}),
                        Map.of("PIDPOOL_REDIS_REDISSON", "{noSuchConfig: 1}"),
                        "redis.redisson",
                        "Redisson"),
                Arguments.of(
                        edit.apply(new String[] {"url: \"jdbc:postgresql://db:5432/pidpool\", ", ""}),
                        Map.of(),
                        "database.url",
                        "required"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_DATABASE_URL", "postgres://db/pidpool"),
                        "database.url",
                        "jdbc:"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_DATABASE_MAX_POOL_SIZE", "0"),
                        "database.maxPoolSize",
                        "1..500"),
                Arguments.of(
                        edit.apply(new String[] {"secretKey: \"" + KEY + "\", ", ""}),
                        Map.of(),
                        "security.secretKey",
                        "required"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_SECRET_KEY", "not base64 !!"),
                        "security.secretKey",
                        "not valid base64"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_SECRET_KEY", "c2hvcnQ="),
                        "security.secretKey",
                        "16 or 32 bytes"),
                Arguments.of(
                        DESIGN_EXAMPLE, Map.of("PIDPOOL_SECURITY_TOKENS", "[]"), "security.tokens", "at least one"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: short, role: admin}]"),
                        "security.tokens[0].token",
                        "16..512"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: \"" + TOKEN + "\", role: root}]"),
                        "security.tokens[0].role",
                        "one of viewer, operator, admin"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: \"" + TOKEN + "\"}]"),
                        "security.tokens[0].role",
                        "required"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of(
                                "PIDPOOL_SECURITY_TOKENS",
                                "[{token: \"" + TOKEN + "\", role: admin}, {token: \"" + TOKEN + "\", role: viewer}]"),
                        "security.tokens[1].token",
                        "repeats"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: \"" + TOKEN + "\", role: admin, scope: all}]"),
                        "security.tokens[0].scope",
                        "unknown key"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: \"" + TOKEN + "\", role: admin"),
                        "security.tokens",
                        "not valid YAML"),
                Arguments.of(
                        DESIGN_EXAMPLE, Map.of("PIDPOOL_WORKER_ENABLED", "yes"), "worker.enabled", "true or false"),
                Arguments.of(DESIGN_EXAMPLE, Map.of("PIDPOOL_CLUSTER", "a/b"), "cluster", "[A-Za-z0-9_.-]"),
                Arguments.of("- just\n- a list\n", Map.of(), "config", "mapping"),
                Arguments.of("cluster: [unclosed\n", Map.of(), "config", "not valid YAML"),
                Arguments.of(
                        DESIGN_EXAMPLE.replace("http:      { port: 8080 }", "http: 8080"),
                        Map.of(),
                        "http",
                        "mapping"));
    }

    @ParameterizedTest(name = "[{index}] {2}")
    @MethodSource("invalidConfigs")
    void invalidConfigNamesTheKey(String yaml, Map<String, String> env, String key, String hint) {
        ConfigException e = fail(yaml, env);
        assertThat(e).as("expected a ConfigException about %s", key).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
        assertThat(e.field()).isEqualTo(key);
        assertThat(e.getMessage()).contains(key).contains(hint);
        env.forEach((name, value) -> assertThat(e.getMessage()).contains(name));
        // secrets are never repeated
        assertThat(e.getMessage()).doesNotContain(KEY).doesNotContain(TOKEN).doesNotContain("db-pass-42");
    }

    @Test
    void secretValuesAreNotEchoedInErrors() {
        ConfigException badKey = fail(DESIGN_EXAMPLE, Map.of("PIDPOOL_SECURITY_SECRET_KEY", "sekrit!!value"));
        assertThat(badKey.getMessage()).doesNotContain("sekrit");
        ConfigException badToken =
                fail(DESIGN_EXAMPLE, Map.of("PIDPOOL_SECURITY_TOKENS", "[{token: tiny-sekrit, role: admin}]"));
        assertThat(badToken.getMessage()).doesNotContain("tiny-sekrit");
        ConfigException badPort =
                fail(DESIGN_EXAMPLE.replace("password: \"db-pass-42\"", "password: [\"db-pass-42\"]"), Map.of());
        assertThat(badPort.field()).isEqualTo("database.password");
        assertThat(badPort.getMessage()).doesNotContain("db-pass-42");
        ConfigException badYaml = fail("security: {secretKey: sekrit-value, [\n", Map.of());
        assertThat(badYaml.getMessage()).doesNotContain("sekrit");
    }

    @Test
    void allValidationProblemsAreReportedTogether() {
        Map<String, String> env = new HashMap<>();
        env.put("PIDPOOL_HTTP_PORT", "-1");
        env.put("PIDPOOL_DATABASE_URL", "nope");
        env.put("PIDPOOL_SECURITY_TOKENS", "[]");
        ConfigException e = fail(DESIGN_EXAMPLE, env);
        assertThat(e.problems())
                .extracting(ConfigException.Problem::key)
                .containsExactly("http.port", "database.url", "security.tokens");
        assertThat(e.getMessage()).contains("3 problems");
    }

    @Test
    void configBuiltInCodeIsValidatedToo() {
        ServerConfig c = load(DESIGN_EXAMPLE, Map.of());
        ServerConfig broken = new ServerConfig(
                c.cluster(),
                new HttpConfig("127.0.0.1", 99999, 2048),
                c.zookeeper(),
                c.redis(),
                c.database(),
                c.security(),
                c.worker());
        assertThatThrownBy(() -> ConfigLoader.validate(broken))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("http.port");
        assertThat(ConfigLoader.validate(c)).isEqualTo(c);
    }

    @Test
    void variableNamesWithoutHumpUnderscoresAreAcceptedToo() {
        assertThat(EnvironmentKeys.aliasName("security.secretKey")).isEqualTo("PIDPOOL_SECURITY_SECRETKEY");
        String yaml = DESIGN_EXAMPLE.replace("secretKey: \"" + KEY + "\", ", "");
        ServerConfig c = load(yaml, Map.of("PIDPOOL_SECURITY_SECRETKEY", OTHER_KEY, "PIDPOOL_ZOOKEEPER_AUTH", "u:p"));
        assertThat(c.security().secretKey()).isEqualTo(OTHER_KEY);
        assertThat(c.zookeeper().auth()).isEqualTo("u:p");

        ConfigException both = fail(
                DESIGN_EXAMPLE, Map.of("PIDPOOL_SECURITY_SECRETKEY", OTHER_KEY, "PIDPOOL_SECURITY_SECRET_KEY", KEY));
        assertThat(both.problems()).extracting(ConfigException.Problem::key).containsExactly("security.secretKey");
        assertThat(both.getMessage())
                .contains("PIDPOOL_SECURITY_SECRETKEY")
                .doesNotContain(KEY)
                .doesNotContain(OTHER_KEY);
    }

    @Test
    void keyringFromSecretKeysWithACurrentKeyOpensOldAndSealsWithNew() {
        String yaml = DESIGN_EXAMPLE.replace(
                "secretKey: \"" + KEY + "\", ",
                "secretKeys: { k2024: \"" + KEY + "\", k2025: \"" + OTHER_KEY + "\" }, currentKeyId: k2025, ");
        ServerConfig c = load(yaml, Map.of());
        var sealer = c.security().sealer();
        assertThat(sealer.currentKeyId()).isEqualTo("k2025");
        assertThat(sealer.keyIds()).containsExactlyInAnyOrder("k2024", "k2025");
        var old = io.pidpool.core.secret.SecretSealer.fromConfig("k2024", Map.of("k2024", KEY))
                .seal("old-password");
        assertThat(sealer.open(old)).isEqualTo("old-password");
        assertThat(sealer.seal("new").keyId()).isEqualTo("k2025");
        assertThat(c.toString()).doesNotContain(KEY).doesNotContain(OTHER_KEY);
    }

    @Test
    void singleSecretKeyPlusNamedKeysKeepsTheDerivedIdCurrentUnlessTold() {
        ServerConfig c = load(DESIGN_EXAMPLE, Map.of("PIDPOOL_SECURITY_SECRET_KEYS", "{next: " + OTHER_KEY + "}"));
        var sealer = c.security().sealer();
        String derived = io.pidpool.core.secret.SecretSealer.keyIdOf(
                java.util.Base64.getDecoder().decode(KEY));
        assertThat(sealer.currentKeyId()).isEqualTo(derived);
        assertThat(sealer.keyIds()).containsExactlyInAnyOrder(derived, "next");
        ServerConfig rotated = load(
                DESIGN_EXAMPLE,
                Map.of(
                        "PIDPOOL_SECURITY_SECRET_KEYS",
                        "{next: " + OTHER_KEY + "}",
                        "PIDPOOL_SECURITY_CURRENT_KEY_ID",
                        "next"));
        assertThat(rotated.security().sealer().currentKeyId()).isEqualTo("next");
    }

    static Stream<Arguments> badKeyrings() {
        String noKey = DESIGN_EXAMPLE.replace("secretKey: \"" + KEY + "\", ", "");
        return Stream.of(
                Arguments.of(noKey, Map.of(), "security.secretKey", "required"),
                Arguments.of(
                        noKey,
                        Map.of("PIDPOOL_SECURITY_SECRET_KEYS", "{a: " + KEY + ", b: " + OTHER_KEY + "}"),
                        "security.currentKeyId",
                        "is required"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_CURRENT_KEY_ID", "missing"),
                        "security.currentKeyId",
                        "not in the keyring"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_SECRET_KEYS", "{a: \"c2hvcnQ=\"}"),
                        "security.secretKeys.a",
                        "16 or 32 bytes"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_SECURITY_SECRET_KEYS", "{\"bad id!\": " + OTHER_KEY + "}"),
                        "security.secretKeys",
                        "bad id!"),
                Arguments.of(
                        DESIGN_EXAMPLE,
                        Map.of("PIDPOOL_ZOOKEEPER_AUTH", "no-colon-secret-zk"),
                        "zookeeper.auth",
                        "user:password"));
    }

    @ParameterizedTest
    @MethodSource("badKeyrings")
    void badKeyringsAndZooKeeperAuthAreRejectedWithoutEchoingSecrets(
            String yaml, Map<String, String> env, String key, String message) {
        ConfigException e = fail(yaml, env);
        assertThat(e).as("expected a problem at %s", key).isNotNull();
        assertThat(e.problems()).extracting(ConfigException.Problem::key).contains(key);
        assertThat(e.getMessage())
                .contains(message)
                .doesNotContain(KEY)
                .doesNotContain(OTHER_KEY)
                .doesNotContain("no-colon-secret-zk");
    }

    /** The secrets README's production example takes from the environment. */
    static final Map<String, String> PRODUCTION_ENV = Map.of(
            "PIDPOOL_ZOOKEEPER_AUTH", "pidpool:zk-secret",
            "PIDPOOL_REDIS_PASSWORD", "redis-secret",
            "PIDPOOL_DATABASE_PASSWORD", "db-secret",
            "PIDPOOL_SECURITY_SECRET_KEY", KEY,
            "PIDPOOL_SECURITY_TOKENS", "[{name: ops, token: \"" + TOKEN + "\", role: admin}]");

    @Test
    void documentedProductionExamplesLoadWithSecretsFromTheEnvironment() throws Exception {
        Path docs = Path.of("..", "docs", "server.example.yml");
        ServerConfig example = new ConfigLoader(PRODUCTION_ENV).load(docs);
        assertThat(example.zookeeper().connect()).isEqualTo("zk1.internal:2181,zk2.internal:2181,zk3.internal:2181");
        assertThat(example.zookeeper().auth()).isEqualTo("pidpool:zk-secret");
        assertThat(example.redis().password()).isEqualTo("redis-secret");
        assertThat(example.database().password()).isEqualTo("db-secret");
        assertThat(example.security().sealer().currentKeyId()).startsWith("k");

        String readme = Files.readString(Path.of("..", "README.md"));
        int section = readme.indexOf("## Production configuration");
        assertThat(section).as("README section").isPositive();
        int start = readme.indexOf("```yaml\n", section) + "```yaml\n".length();
        String yaml = readme.substring(start, readme.indexOf("```", start));
        ServerConfig fromReadme = load(yaml, PRODUCTION_ENV);
        assertThat(fromReadme.cluster()).isEqualTo("prod");
        assertThat(fromReadme.database().url()).startsWith("jdbc:postgresql://");
        assertThat(fromReadme.zookeeper().auth()).isEqualTo("pidpool:zk-secret");
        assertThat(fromReadme.toString())
                .doesNotContain("zk-secret")
                .doesNotContain("redis-secret")
                .doesNotContain("db-secret")
                .doesNotContain(KEY);
    }
}
