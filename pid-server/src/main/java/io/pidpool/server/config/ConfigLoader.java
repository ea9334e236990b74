package io.pidpool.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.pidpool.client.internal.zk.ZkAuth;
import io.pidpool.core.config.UnknownVariables;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.Names;
import io.pidpool.server.config.ConfigException.Problem;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.redisson.config.Config;

/**
 * Reads {@code server.yml} into a {@link ServerConfig}: built-in defaults, then the file, then
 * {@code PIDPOOL_*} environment variables, then validation.
 *
 * <p><b>Environment scheme.</b> Every key has one variable: {@code PIDPOOL_} followed by the key
 * path with dots and camel-case humps turned into underscores, upper-cased: {@code
 * zookeeper.connect} is {@code PIDPOOL_ZOOKEEPER_CONNECT}, {@code zookeeper.sessionTimeoutMs} is
 * {@code PIDPOOL_ZOOKEEPER_SESSION_TIMEOUT_MS}. A scalar key takes the variable's text as its value;
 * a list or map key ({@code security.tokens}, {@code redis.redisson}) takes a YAML (or JSON)
 * document, e.g. {@code PIDPOOL_SECURITY_TOKENS='[{token: "...", role: admin}]'}, which replaces
 * the whole list or map. {@link #keys()} lists them all. Variables starting with {@code PIDPOOL_}
 * that name no key are ignored with a warning naming the closest key ({@link
 * #unknownVariableWarnings}; not for {@code PIDPOOL_TEST_*} and the {@link UnknownVariables#PROCESS_VARIABLES}). The same name without the hump
 * underscores ({@link #aliasName}: {@code PIDPOOL_SECURITY_SECRETKEY}) is accepted too; both at once
 * is an error.
 *
 * <p>The environment is passed in, never read statically, so tests can set it. Error messages name
 * the key and, when the value came from the environment, the variable; they never repeat the
 * value of a secret key (passwords, the secret key, tokens, the Redisson block).
 */
public final class ConfigLoader {
    public static final String ENV_PREFIX = "PIDPOOL_";

    /** One configurable key. {@code structured} keys take a YAML document from the environment. */
    public record Key(String path, String envName, boolean structured, boolean secret) {}

    private static final Set<String> SECRET_KEYS = Set.of(
            "zookeeper.auth",
            "redis.password",
            "redis.redisson",
            "database.password",
            "security.secretKey",
            "security.secretKeys",
            "security.tokens");
    private static final List<Key> KEYS = List.copyOf(collectKeys());
    private static final Pattern REDIS_ADDRESS = Pattern.compile("rediss?://[^\\s/:]+:\\d{1,5}");
    private static final Pattern NO_SPACE = Pattern.compile("\\S+");
    private static final long MAX_REQUEST_BYTES_LIMIT = 64L << 20;

    private final Map<String, String> env;
    private final ObjectMapper yaml;

    public ConfigLoader(Map<String, String> env) {
        this.env = Map.copyOf(Objects.requireNonNull(env, "env"));
        this.yaml = YAMLMapper.builder()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
                .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
                .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_ENUMS)
                .build();
    }

    /** Every configurable key with its environment variable, in file order. */
    public static List<Key> keys() {
        return KEYS;
    }

    /** The environment variable of a key path, e.g. {@code http.port} → {@code PIDPOOL_HTTP_PORT}. */
    public static String envName(String keyPath) {
        StringBuilder out = new StringBuilder(ENV_PREFIX);
        for (char c : keyPath.toCharArray()) {
            if (c == '.') {
                out.append('_');
            } else if (Character.isUpperCase(c)) {
                out.append('_').append(c);
            } else {
                out.append(Character.toUpperCase(c));
            }
        }
        return out.toString();
    }

    /**
     * The alternative variable of a key path: {@code PIDPOOL_} and the path with only its dots turned
     * into underscores, upper-cased ({@code security.secretKey} → {@code PIDPOOL_SECURITY_SECRETKEY}).
     * Accepted as well as {@link #envName}; setting both is an error.
     */
    public static String aliasName(String keyPath) {
        return ENV_PREFIX + keyPath.replace('.', '_').toUpperCase(java.util.Locale.ROOT);
    }

    /**
     * One warning per {@code PIDPOOL_*} variable of the environment that names no key (in either
     * spelling) and is neither a {@link UnknownVariables#PROCESS_VARIABLES process variable} nor {@code
     * PIDPOOL_TEST_*}: most likely a typo that would otherwise leave the key at its default without
     * a word. Each names the closest known variable and its key. Such a variable is ignored, not
     * refused, as Kafka and ZooKeeper do with unknown settings: the same environment may hold the
     * variables of a pid-worker on the same host. Sorted by variable name.
     */
    public List<String> unknownVariableWarnings() {
        Map<String, String> known = new java.util.HashMap<>();
        for (Key key : KEYS) {
            known.put(key.envName(), key.path());
            known.put(aliasName(key.path()), key.path());
        }
        return UnknownVariables.warnings(env, known);
    }

    /** Loads {@code file}, applies the environment and validates. */
    public ServerConfig load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw ConfigException.of("config", "file " + file + " does not exist");
        } catch (IOException e) {
            throw ConfigException.of("config", "cannot read " + file + ": " + e.getMessage());
        }
        return load(text, file.getFileName().toString());
    }

    /**
     * Loads YAML text (named {@code sourceName} in messages), applies the environment and validates.
     */
    public ServerConfig load(String yamlText, String sourceName) {
        ObjectNode tree = defaults();
        merge(tree, parseFile(yamlText, sourceName));
        Map<String, String> fromEnv = applyEnvironment(tree);
        UnaryOperator<String> sourceOf = key -> describeSource(key, fromEnv, sourceName);
        ServerConfig bound = bind(tree, sourceOf);
        return validate(bound, sourceOf);
    }

    /** Validates a config built in code (e.g. by {@code standalone}); fills default token names. */
    public static ServerConfig validate(ServerConfig config) {
        return validate(config, key -> "");
    }

    private ObjectNode defaults() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream("server-defaults.yml")) {
            return (ObjectNode) yaml.readTree(Objects.requireNonNull(in, "server-defaults.yml"));
        } catch (IOException e) {
            throw new UncheckedIOException("built-in server-defaults.yml is unreadable", e);
        }
    }

    private ObjectNode parseFile(String text, String sourceName) {
        JsonNode node;
        try {
            node = yaml.readTree(text);
        } catch (JsonProcessingException e) {
            throw ConfigException.of(
                    "config", sourceName + " is not valid YAML" + where(e.getLocation()) + yamlProblem(e));
        }
        if (node == null || node.isMissingNode() || node.isNull()) {
            return JsonNodeFactory.instance.objectNode();
        }
        if (!node.isObject()) {
            throw ConfigException.of(
                    "config", sourceName + " must be a mapping of keys (cluster, http, zookeeper, ...)");
        }
        return (ObjectNode) node;
    }

    /** Applies PIDPOOL_* variables onto {@code tree}; returns key path → variable name applied. */
    private Map<String, String> applyEnvironment(ObjectNode tree) {
        Map<String, String> applied = new LinkedHashMap<>();
        List<Problem> problems = new ArrayList<>();
        for (Key key : KEYS) {
            String variable = key.envName();
            String value = env.get(variable);
            String alias = aliasName(key.path());
            if (!alias.equals(variable) && env.get(alias) != null) {
                if (value != null) {
                    problems.add(new Problem(
                            key.path(), "set by both " + variable + " and " + alias + "; keep one of them"));
                    continue;
                }
                variable = alias;
                value = env.get(alias);
            }
            if (value == null) {
                continue;
            }
            JsonNode node;
            if (key.structured()) {
                try {
                    node = yaml.readTree(value);
                } catch (JsonProcessingException e) {
                    problems.add(new Problem(
                            key.path(),
                            "environment variable " + variable + " is not valid YAML" + where(e.getLocation())));
                    continue;
                }
                if (node == null || node.isMissingNode()) {
                    node = JsonNodeFactory.instance.nullNode();
                }
            } else {
                node = TextNode.valueOf(value);
            }
            setAt(tree, key.path(), node);
            applied.put(key.path(), variable);
        }
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
        return applied;
    }

    private ServerConfig bind(ObjectNode tree, UnaryOperator<String> sourceOf) {
        try {
            return yaml.treeToValue(tree, ServerConfig.class);
        } catch (UnrecognizedPropertyException e) {
            String key = pathOf(e);
            String parent = key.contains(".") ? key.substring(0, key.lastIndexOf('.')) : "";
            String known = e.getKnownPropertyIds() == null
                    ? ""
                    : "; known keys" + (parent.isEmpty() ? "" : " under " + parent) + ": "
                            + e.getKnownPropertyIds().stream()
                                    .map(String::valueOf)
                                    .sorted()
                                    .collect(Collectors.joining(", "));
            throw ConfigException.of(key, "unknown key" + known + sourceOf.apply(key));
        } catch (InvalidFormatException e) {
            String key = pathOf(e);
            String found = isSecret(key) ? "" : ", was '" + e.getValue() + "'";
            throw ConfigException.of(key, "expected " + describeType(e.getTargetType()) + found + sourceOf.apply(key));
        } catch (MismatchedInputException e) {
            String key = pathOf(e);
            String what = e.getTargetType() == null ? "another kind of value" : describeType(e.getTargetType());
            throw ConfigException.of(key, "expected " + what + sourceOf.apply(key));
        } catch (JsonMappingException e) {
            String key = pathOf(e);
            String reason = e.getCause() instanceof InputCoercionException ? "number out of range" : "cannot be read";
            throw ConfigException.of(key.isEmpty() ? "config" : key, reason + sourceOf.apply(key));
        } catch (JsonProcessingException e) {
            throw ConfigException.of("config", "cannot be read" + where(e.getLocation()));
        }
    }

    // ---------------------------------------------------------------- validation

    private static ServerConfig validate(ServerConfig c, UnaryOperator<String> sourceOf) {
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
            String key = pathOf(e);
            return key.isEmpty() ? "unreadable block" : "unknown or wrongly typed key '" + key + "'";
        } catch (IOException | RuntimeException e) {
            return "unreadable block (" + e.getClass().getSimpleName() + ")";
        }
    }

    // ---------------------------------------------------------------- helpers

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    private static boolean isSecret(String key) {
        return SECRET_KEYS.stream()
                .anyMatch(secret -> key.equals(secret) || key.startsWith(secret + ".") || key.startsWith(secret + "["));
    }

    private static String describeSource(String key, Map<String, String> fromEnv, String sourceName) {
        String best = null;
        for (String applied : fromEnv.keySet()) {
            if ((key.equals(applied) || key.startsWith(applied + ".") || key.startsWith(applied + "["))
                    && (best == null || applied.length() > best.length())) {
                best = applied;
            }
        }
        if (best != null) {
            return " (from environment variable " + fromEnv.get(best) + ")";
        }
        List<String> below = fromEnv.entrySet().stream()
                .filter(e -> e.getKey().startsWith(key + "."))
                .map(Map.Entry::getValue)
                .toList();
        return below.isEmpty()
                ? " (in " + sourceName + ")"
                : " (in " + sourceName + " and environment variables " + String.join(", ", below) + ")";
    }

    private static String pathOf(JsonMappingException e) {
        StringBuilder out = new StringBuilder();
        for (JsonMappingException.Reference ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (out.length() > 0) {
                    out.append('.');
                }
                out.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) {
                out.append('[').append(ref.getIndex()).append(']');
            }
        }
        return out.toString();
    }

    private static String describeType(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class) {
            return "an integer";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type.isEnum()) {
            return "one of "
                    + Arrays.stream(type.getEnumConstants())
                            .map(v -> v.toString().toLowerCase(Locale.ROOT))
                            .collect(Collectors.joining(", "));
        }
        if (type == String.class) {
            return "text";
        }
        if (List.class.isAssignableFrom(type)) {
            return "a list";
        }
        return "a mapping of keys";
    }

    private static String where(JsonLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /** SnakeYAML's problem text without the snippet of the offending line (which may hold a secret). */
    private static String yamlProblem(JsonProcessingException e) {
        if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException marked
                && marked.getProblem() != null) {
            return ": " + marked.getProblem();
        }
        return "";
    }

    private static void merge(ObjectNode target, ObjectNode source) {
        for (Iterator<Map.Entry<String, JsonNode>> it = source.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            JsonNode existing = target.get(entry.getKey());
            if (existing instanceof ObjectNode existingObject && entry.getValue() instanceof ObjectNode sourceObject) {
                merge(existingObject, sourceObject);
            } else {
                target.set(entry.getKey(), entry.getValue());
            }
        }
    }

    private static void setAt(ObjectNode root, String path, JsonNode value) {
        String[] parts = path.split("\\.");
        ObjectNode node = root;
        for (int i = 0; i < parts.length - 1; i++) {
            JsonNode child = node.get(parts[i]);
            if (!(child instanceof ObjectNode)) {
                child = node.putObject(parts[i]);
            }
            node = (ObjectNode) child;
        }
        node.set(parts[parts.length - 1], value);
    }

    private static List<Key> collectKeys() {
        List<Key> keys = new ArrayList<>();
        collect(ServerConfig.class, "", keys);
        return keys;
    }

    private static void collect(Class<?> record, String prefix, List<Key> out) {
        for (RecordComponent component : record.getRecordComponents()) {
            String path = prefix.isEmpty() ? component.getName() : prefix + "." + component.getName();
            Class<?> type = component.getType();
            if (type.isRecord()) {
                collect(type, path, out);
            } else {
                boolean structured = List.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type);
                out.add(new Key(path, envName(path), structured, isSecret(path)));
            }
        }
    }
}
