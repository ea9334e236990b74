package io.pidpool.server.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;

/**
 * What Jackson's failure to read {@code server.yml} means to an operator: the key it concerns, what
 * was expected there and where the value came from. Never the offending text of a secret key, nor
 * SnakeYAML's snippet of the line (which may hold one).
 */
final class BindingErrors {
    private BindingErrors() {}

    /** The file is not YAML, or not a mapping at its top. */
    static ConfigException ofParsing(JsonProcessingException e, String sourceName) {
        return ConfigException.of(
                "config", sourceName + " is not valid YAML" + where(e.getLocation()) + yamlProblem(e));
    }

    /** The merged tree does not bind to {@link ServerConfig}; {@code sourceOf} names a key's origin. */
    static ConfigException ofBinding(JsonProcessingException e, UnaryOperator<String> sourceOf) {
        if (e instanceof UnrecognizedPropertyException unknown) {
            String key = pathOf(unknown);
            String parent = key.contains(".") ? key.substring(0, key.lastIndexOf('.')) : "";
            String known = unknown.getKnownPropertyIds() == null
                    ? ""
                    : "; known keys" + (parent.isEmpty() ? "" : " under " + parent) + ": "
                            + unknown.getKnownPropertyIds().stream()
                                    .map(String::valueOf)
                                    .sorted()
                                    .collect(Collectors.joining(", "));
            return ConfigException.of(key, "unknown key" + known + sourceOf.apply(key));
        }
        if (e instanceof InvalidFormatException format) {
            String key = pathOf(format);
            String found = EnvironmentKeys.isSecret(key) ? "" : ", was '" + format.getValue() + "'";
            return ConfigException.of(
                    key, "expected " + describeType(format.getTargetType()) + found + sourceOf.apply(key));
        }
        if (e instanceof MismatchedInputException mismatch) {
            String key = pathOf(mismatch);
            String what =
                    mismatch.getTargetType() == null ? "another kind of value" : describeType(mismatch.getTargetType());
            return ConfigException.of(key, "expected " + what + sourceOf.apply(key));
        }
        if (e instanceof JsonMappingException mapping) {
            String key = pathOf(mapping);
            String reason =
                    mapping.getCause() instanceof InputCoercionException ? "number out of range" : "cannot be read";
            return ConfigException.of(key.isEmpty() ? "config" : key, reason + sourceOf.apply(key));
        }
        return ConfigException.of("config", "cannot be read" + where(e.getLocation()));
    }

    /** The key path a mapping failure points at, e.g. {@code security.tokens[0].role}. */
    static String pathOf(JsonMappingException e) {
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

    /** {@code " (line l, column c)"}, or nothing when the location is unknown. */
    static String where(JsonLocation location) {
        if (location == null || location.getLineNr() < 1) {
            return "";
        }
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
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

    /** SnakeYAML's problem text without the snippet of the offending line (which may hold a secret). */
    private static String yamlProblem(JsonProcessingException e) {
        if (e.getCause() instanceof org.yaml.snakeyaml.error.MarkedYAMLException marked
                && marked.getProblem() != null) {
            return ": " + marked.getProblem();
        }
        return "";
    }
}
