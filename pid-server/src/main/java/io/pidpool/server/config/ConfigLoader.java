package io.pidpool.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Reads {@code server.yml} into a {@link ServerConfig}: built-in defaults, then the file, then
 * {@code PIDPOOL_*} environment variables ({@link EnvironmentKeys}), then validation ({@link
 * ServerConfigChecks}).
 *
 * <p>The environment is passed in, never read statically, so tests can set it. Error messages name
 * the key and, when the value came from the environment, the variable; they never repeat the
 * value of a secret key (passwords, the secret key, tokens, the Redisson block; {@link
 * BindingErrors}).
 */
public final class ConfigLoader {
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

    /**
     * One warning per {@code PIDPOOL_*} variable of the environment that names no key ({@link
     * EnvironmentKeys#unknownVariableWarnings}), sorted by variable name.
     */
    public List<String> unknownVariableWarnings() {
        return EnvironmentKeys.unknownVariableWarnings(env);
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
        Map<String, String> fromEnv = EnvironmentKeys.apply(tree, env, yaml);
        UnaryOperator<String> sourceOf = key -> EnvironmentKeys.describeSource(key, fromEnv, sourceName);
        ServerConfig bound = bind(tree, sourceOf);
        return ServerConfigChecks.validate(bound, sourceOf);
    }

    /** Validates a config built in code (e.g. by {@code standalone}); fills default token names. */
    public static ServerConfig validate(ServerConfig config) {
        return ServerConfigChecks.validate(config, key -> "");
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
            throw BindingErrors.ofParsing(e, sourceName);
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

    private ServerConfig bind(ObjectNode tree, UnaryOperator<String> sourceOf) {
        try {
            return yaml.treeToValue(tree, ServerConfig.class);
        } catch (JsonProcessingException e) {
            throw BindingErrors.ofBinding(e, sourceOf);
        }
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
}
