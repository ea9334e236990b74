package io.pidpool.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.PidSpec;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns request JSON trees into core {@link Operation}s, strictly: unknown fields, wrong JSON types
 * and every rule the core records enforce are reported as {@code INVALID_ARGUMENT} with the full
 * path of the offending field ({@code operations[0].pids[2].monthlyQuota}). Never puts the value
 * of a {@code secret} into a message. Stateless.
 */
final class RequestParser {
    /** Operations per request: the HTTP API's own limit; the core's batch rules are in OperationBatch. */
    static final int MAX_OPERATIONS = 1000;

    private static final Set<String> PID_SPEC_FIELDS =
            Set.of("id", "secret", "monthlyQuota", "overageAllowance", "attributes");
    private static final Set<String> MODULE_SETTINGS_FIELDS = Set.of("servers", "monthlyDemand", "rebalanceDelayMs");

    private RequestParser() {}

    /** {@code {"operations":[...]}} of {@code POST /api/v1/batches}. */
    static List<Operation<String>> batch(JsonNode body) {
        requireObject(body, "", "the request body");
        requireOnly(body, Set.of("operations"), "");
        JsonNode ops = body.get("operations");
        if (ops == null || ops.isNull()) {
            throw PidPoolException.invalid("operations", "operations is required");
        }
        if (!ops.isArray()) {
            throw PidPoolException.invalid("operations", "operations must be a list");
        }
        if (ops.size() > MAX_OPERATIONS) {
            // before parsing them: bounds the work of a request (an empty batch is the core's rule)
            throw PidPoolException.invalid(
                    "operations", "a batch holds 1..%d operations, got %d", MAX_OPERATIONS, ops.size());
        }
        List<Operation<String>> result = new ArrayList<>(ops.size());
        for (int i = 0; i < ops.size(); i++) {
            result.add(operation(ops.get(i), "operations[" + i + "]"));
        }
        return result;
    }

    /**
     * {@code {"servers":4,"monthlyDemand":200000,"rebalanceDelayMs":30000}} of {@code PUT
     * /api/v1/modules/{module}}; an absent or null {@code rebalanceDelayMs} is the server's default.
     */
    static Operation.SetServers<String> moduleSettings(ModuleKey module, JsonNode body) {
        requireObject(body, "", "the request body");
        requireOnly(body, MODULE_SETTINGS_FIELDS, "");
        int servers = requiredInt(body, "servers", "");
        long demand = optionalLong(body, "monthlyDemand", "", 0);
        java.time.Duration delay = rebalanceDelay(body, "");
        return at("", () -> new Operation.SetServers<>(module, servers, demand, delay));
    }

    private static java.time.Duration rebalanceDelay(JsonNode node, String at) {
        JsonNode value = node.get("rebalanceDelayMs");
        return value == null || value.isNull()
                ? null
                : java.time.Duration.ofMillis(integral(value, join(at, "rebalanceDelayMs")));
    }

    private static Operation<String> operation(JsonNode op, String at) {
        requireObject(op, at, at);
        OperationType type = type(op, at);
        return switch (type) {
            case ADD -> {
                requireOnly(op, Set.of("type", "module", "pids"), at);
                ModuleKey module = moduleKey(op, "module", at);
                List<PidSpec<String>> specs = pidSpecs(op, at);
                yield at(at, () -> new Operation.Add<>(module, specs));
            }
            case UPDATE -> {
                requireOnly(op, Set.of("type", "pids"), at);
                List<PidSpec<String>> specs = pidSpecs(op, at);
                yield at(at, () -> new Operation.Update<>(specs));
            }
            case DELETE -> {
                requireOnly(op, Set.of("type", "pids"), at);
                List<String> ids = pidIds(op, at);
                yield at(at, () -> new Operation.Delete<>(ids));
            }
            case MIGRATE -> {
                requireOnly(op, Set.of("type", "pids", "to"), at);
                List<String> ids = pidIds(op, at);
                ModuleKey to = moduleKey(op, "to", at);
                yield at(at, () -> new Operation.Migrate<>(ids, to));
            }
            case RESET_QUOTA -> {
                requireOnly(op, Set.of("type", "pids"), at);
                List<String> ids = pidIds(op, at);
                yield at(at, () -> new Operation.ResetQuota<>(ids));
            }
            case SET_SERVERS -> {
                requireOnly(op, Set.of("type", "module", "servers", "monthlyDemand", "rebalanceDelayMs"), at);
                ModuleKey module = moduleKey(op, "module", at);
                int servers = requiredInt(op, "servers", at);
                long demand = optionalLong(op, "monthlyDemand", at, 0);
                java.time.Duration delay = rebalanceDelay(op, at);
                yield at(at, () -> new Operation.SetServers<>(module, servers, demand, delay));
            }
        };
    }

    private static OperationType type(JsonNode op, String at) {
        String field = join(at, "type");
        JsonNode node = op.get("type");
        if (node == null || node.isNull()) {
            throw PidPoolException.invalid(field, "%s is required: one of %s", field, List.of(OperationType.values()));
        }
        if (node.isTextual()) {
            for (OperationType t : OperationType.values()) {
                if (t.name().equals(node.textValue())) {
                    return t;
                }
            }
        }
        throw PidPoolException.invalid(
                field, "%s must be one of %s, was %s", field, List.of(OperationType.values()), node);
    }

    private static ModuleKey moduleKey(JsonNode op, String name, String at) {
        String field = join(at, name);
        String text = requiredText(op, name, at);
        try {
            return ModuleKey.parse(text);
        } catch (PidPoolException e) {
            throw PidPoolException.invalid(field, "%s: %s", field, e.getMessage());
        }
    }

    /** The specs of an ADD or UPDATE; whether a secret is required is the core's rule (ADD needs one). */
    private static List<PidSpec<String>> pidSpecs(JsonNode op, String at) {
        JsonNode pids = requiredList(op, at);
        List<PidSpec<String>> specs = new ArrayList<>(pids.size());
        for (int j = 0; j < pids.size(); j++) {
            String pidAt = join(at, "pids") + "[" + j + "]";
            JsonNode p = pids.get(j);
            requireObject(p, pidAt, pidAt);
            requireOnly(p, PID_SPEC_FIELDS, pidAt);
            String id = requiredText(p, "id", pidAt);
            String secret = optionalText(p, "secret", pidAt);
            long quota = requiredLong(p, "monthlyQuota", pidAt);
            long allowance = optionalLong(p, "overageAllowance", pidAt, 0);
            Map<String, String> attributes = attributes(p, pidAt);
            specs.add(at(pidAt, () -> new PidSpec<>(id, secret, quota, allowance, attributes)));
        }
        return specs;
    }

    private static List<String> pidIds(JsonNode op, String at) {
        JsonNode pids = requiredList(op, at);
        List<String> ids = new ArrayList<>(pids.size());
        for (int j = 0; j < pids.size(); j++) {
            JsonNode id = pids.get(j);
            String field = join(at, "pids") + "[" + j + "]";
            if (!id.isTextual()) {
                throw PidPoolException.invalid(field, "%s must be a PID id (text)", field);
            }
            ids.add(id.textValue());
        }
        return ids;
    }

    private static JsonNode requiredList(JsonNode op, String at) {
        String field = join(at, "pids");
        JsonNode pids = op.get("pids");
        if (pids == null || pids.isNull()) {
            throw PidPoolException.invalid(field, "%s is required", field);
        }
        if (!pids.isArray()) {
            throw PidPoolException.invalid(field, "%s must be a list", field);
        }
        return pids;
    }

    private static Map<String, String> attributes(JsonNode p, String at) {
        String field = join(at, "attributes");
        JsonNode node = p.get("attributes");
        if (node == null || node.isNull()) {
            return Map.of();
        }
        if (!node.isObject()) {
            throw PidPoolException.invalid(field, "%s must be an object of text values", field);
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw PidPoolException.invalid(field + "." + e.getKey(), "%s.%s must be text", field, e.getKey());
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return out;
    }

    private static String requiredText(JsonNode node, String name, String at) {
        String field = join(at, name);
        JsonNode value = node.get(name);
        if (value == null || value.isNull()) {
            throw PidPoolException.invalid(field, "%s is required", field);
        }
        if (!value.isTextual()) {
            throw PidPoolException.invalid(field, "%s must be text", field);
        }
        return value.textValue();
    }

    private static String optionalText(JsonNode node, String name, String at) {
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? null : requiredText(node, name, at);
    }

    private static int requiredInt(JsonNode node, String name, String at) {
        long value = requiredLong(node, name, at);
        String field = join(at, name);
        if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
            throw PidPoolException.invalid(field, "%s is out of range, was %d", field, value);
        }
        return (int) value;
    }

    private static long requiredLong(JsonNode node, String name, String at) {
        String field = join(at, name);
        JsonNode value = node.get(name);
        if (value == null || value.isNull()) {
            throw PidPoolException.invalid(field, "%s is required", field);
        }
        return integral(value, field);
    }

    private static long optionalLong(JsonNode node, String name, String at, long dflt) {
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? dflt : integral(value, join(at, name));
    }

    private static long integral(JsonNode value, String field) {
        if (!value.isIntegralNumber() || !value.canConvertToLong()) {
            throw PidPoolException.invalid(field, "%s must be an integer (64-bit), was %s", field, shape(value));
        }
        return value.longValue();
    }

    private static String shape(JsonNode value) {
        if (value.isNumber()) {
            return value.isIntegralNumber() ? "a number out of range" : "a fraction";
        }
        return value.isTextual() ? "text" : value.getNodeType().name().toLowerCase(java.util.Locale.ROOT);
    }

    private static void requireObject(JsonNode node, String field, String what) {
        if (node == null || !node.isObject()) {
            throw PidPoolException.invalid(field.isEmpty() ? null : field, "%s must be a JSON object", what);
        }
    }

    private static void requireOnly(JsonNode node, Set<String> allowed, String at) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (!allowed.contains(name)) {
                String field = join(at, name);
                throw PidPoolException.invalid(
                        field,
                        "unknown field %s; allowed here: %s",
                        field,
                        allowed.stream().sorted().toList());
            }
        }
    }

    /** Runs a core constructor and re-anchors its field ({@code pids.secret}) under {@code at}. */
    private static <T> T at(String at, Supplier<T> constructor) {
        try {
            return constructor.get();
        } catch (PidPoolException e) {
            throw new PidPoolException(e.code(), reanchor(at, e.field()), e.getMessage(), e);
        }
    }

    private static String reanchor(String at, String coreField) {
        if (coreField == null) {
            return at.isEmpty() ? null : at;
        }
        String field = coreField;
        // a PidSpec at "operations[0].pids[3]" reports "pids.secret": keep only the last part
        if (at.endsWith("]") && at.contains(".pids[") && field.startsWith("pids.")) {
            field = field.substring("pids.".length());
        }
        if (field.startsWith("module.")) {
            field = "module";
        }
        return join(at, field);
    }

    private static String join(String at, String name) {
        return at.isEmpty() ? name : at + "." + name;
    }
}
