package io.pidpool.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.pidpool.core.config.UnknownVariables;
import io.pidpool.server.config.ConfigException.Problem;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code PIDPOOL_*} environment scheme of {@code server.yml}. Every key has one variable: {@code
 * PIDPOOL_} followed by the key path with dots and camel-case humps turned into underscores,
 * upper-cased: {@code zookeeper.connect} is {@code PIDPOOL_ZOOKEEPER_CONNECT}, {@code
 * zookeeper.sessionTimeoutMs} is {@code PIDPOOL_ZOOKEEPER_SESSION_TIMEOUT_MS}. A scalar key takes the
 * variable's text as its value; a list or map key ({@code security.tokens}, {@code redis.redisson})
 * takes a YAML (or JSON) document, e.g. {@code PIDPOOL_SECURITY_TOKENS='[{token: "...", role:
 * admin}]'}, which replaces the whole list or map. {@link #all()} lists them all. Variables starting
 * with {@code PIDPOOL_} that name no key are ignored with a warning naming the closest key ({@link
 * #unknownVariableWarnings}; not for {@code PIDPOOL_TEST_*} and the {@link
 * UnknownVariables#PROCESS_VARIABLES}). The same name without the hump underscores ({@link
 * #aliasName}: {@code PIDPOOL_SECURITY_SECRETKEY}) is accepted too; both at once is an error.
 *
 * <p>The keys are read off the {@link ServerConfig} records, so a new setting has its variable
 * without a word here.
 */
public final class EnvironmentKeys {
    public static final String PREFIX = "PIDPOOL_";

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

    private EnvironmentKeys() {}

    /** Every configurable key with its environment variable, in file order. */
    public static List<Key> all() {
        return KEYS;
    }

    /** The environment variable of a key path, e.g. {@code http.port} → {@code PIDPOOL_HTTP_PORT}. */
    public static String envName(String keyPath) {
        StringBuilder out = new StringBuilder(PREFIX);
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
        return PREFIX + keyPath.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** Whether {@code key} (or the list or map it lies in) holds a secret, whose value is never echoed. */
    static boolean isSecret(String key) {
        return SECRET_KEYS.stream()
                .anyMatch(secret -> key.equals(secret) || key.startsWith(secret + ".") || key.startsWith(secret + "["));
    }

    /**
     * One warning per {@code PIDPOOL_*} variable of {@code env} that names no key (in either
     * spelling) and is neither a {@link UnknownVariables#PROCESS_VARIABLES process variable} nor {@code
     * PIDPOOL_TEST_*}: most likely a typo that would otherwise leave the key at its default without
     * a word. Each names the closest known variable and its key. Such a variable is ignored, not
     * refused, as Kafka and ZooKeeper do with unknown settings: the same environment may hold the
     * variables of a pid-worker on the same host. Sorted by variable name.
     */
    static List<String> unknownVariableWarnings(Map<String, String> env) {
        Map<String, String> known = new HashMap<>();
        for (Key key : KEYS) {
            known.put(key.envName(), key.path());
            known.put(aliasName(key.path()), key.path());
        }
        return UnknownVariables.warnings(env, known);
    }

    /**
     * Applies the variables of {@code env} onto {@code tree} (structured ones parsed by {@code
     * yaml}); returns key path → variable name applied. Every problem is reported at once.
     */
    static Map<String, String> apply(ObjectNode tree, Map<String, String> env, ObjectMapper yaml) {
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
                            "environment variable " + variable + " is not valid YAML"
                                    + BindingErrors.where(e.getLocation())));
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

    /**
     * Where the value of {@code key} came from, for error messages: the variable that set it (or the
     * list or map it lies in), else the file, naming the variables that set keys below it.
     */
    static String describeSource(String key, Map<String, String> fromEnv, String sourceName) {
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
