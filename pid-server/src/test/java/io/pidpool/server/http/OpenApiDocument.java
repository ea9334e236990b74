package io.pidpool.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The OpenAPI document served at {@code /api/v1/openapi.json}, read for tests: which routes it
 * describes, its examples, and a JSON-schema validator (draft 2020-12, networknt) for any of its
 * schemas. Shared by {@code OpenApiDocumentTest} and the server IT.
 */
public final class OpenApiDocument {
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");
    private static final SchemaRegistry REGISTRY =
            SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);

    /** An example and the schema it must satisfy; {@code where} says where in the document it is. */
    public record Example(String where, JsonNode schema, JsonNode value) {}

    private final JsonNode root;

    private OpenApiDocument(JsonNode root) {
        this.root = root;
    }

    /** The document on the class path (the one the server serves). */
    public static OpenApiDocument load() {
        return parse(OpenApiRoutes.load());
    }

    public static OpenApiDocument parse(byte[] json) {
        try {
            return new OpenApiDocument(ApiJson.MAPPER.readTree(json));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public JsonNode root() {
        return root;
    }

    /** {@code "GET /api/v1/pids/{id}"} for every operation the document describes. */
    public Set<String> routes() {
        Set<String> routes = new TreeSet<>();
        root.path("paths")
                .fields()
                .forEachRemaining(path -> path.getValue().fieldNames().forEachRemaining(method -> {
                    if (METHODS.contains(method)) {
                        routes.add(method.toUpperCase(Locale.ROOT) + " " + path.getKey());
                    }
                }));
        return routes;
    }

    /** {@code "GET /api/v1/pids/{id}"} for every route a server registered. */
    public static Set<String> routes(List<HttpApi.Route> registered) {
        Set<String> routes = new TreeSet<>();
        registered.forEach(r -> routes.add(r.method() + " " + r.path()));
        return routes;
    }

    /** The operation object of {@code method} on {@code path}, or a missing node. */
    public JsonNode operation(String method, String path) {
        return root.path("paths").path(path).path(method.toLowerCase(Locale.ROOT));
    }

    /** The HTTP statuses the document lists for an operation. */
    public Set<Integer> statuses(String method, String path) {
        Set<Integer> statuses = new TreeSet<>();
        operation(method, path).path("responses").fieldNames().forEachRemaining(s -> statuses.add(Integer.valueOf(s)));
        return statuses;
    }

    /** Every request, response and component example with the schema next to it. */
    public List<Example> examples() {
        List<Example> out = new ArrayList<>();
        root.path("paths")
                .fields()
                .forEachRemaining(path -> path.getValue().fields().forEachRemaining(op -> {
                    if (!METHODS.contains(op.getKey())) {
                        return;
                    }
                    String at = op.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey();
                    collect(at + " request", op.getValue().path("requestBody").path("content"), out);
                    op.getValue().path("responses").fields().forEachRemaining(r -> {
                        JsonNode response = resolve(r.getValue());
                        collect(at + " " + r.getKey(), response.path("content"), out);
                    });
                }));
        root.path("components")
                .path("responses")
                .fields()
                .forEachRemaining(r -> collect(
                        "components.responses." + r.getKey(), r.getValue().path("content"), out));
        return out;
    }

    private void collect(String where, JsonNode content, List<Example> out) {
        content.fields().forEachRemaining(media -> {
            JsonNode body = media.getValue();
            if (body.has("example") && body.has("schema") && media.getKey().equals("application/json")) {
                out.add(new Example(where + " " + media.getKey(), body.get("schema"), body.get("example")));
            }
            body.path("examples")
                    .fields()
                    .forEachRemaining(e -> out.add(new Example(
                            where + " " + media.getKey() + " " + e.getKey(),
                            body.get("schema"),
                            e.getValue().path("value"))));
        });
    }

    private JsonNode resolve(JsonNode node) {
        JsonNode ref = node.get("$ref");
        if (ref == null) {
            return node;
        }
        JsonNode target = root;
        for (String part : ref.asText().substring(2).split("/")) {
            target = target.path(part);
        }
        return target;
    }

    /** The violations of {@code value} against {@code schema} (a schema of this document), empty if valid. */
    public List<String> violations(JsonNode schema, JsonNode value) {
        ObjectNode wrapper = schema.isObject() ? ((ObjectNode) schema).deepCopy() : ApiJson.MAPPER.createObjectNode();
        // "#/components/schemas/X" references resolve against the wrapper's root
        wrapper.set("components", root.get("components"));
        wrapper.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        Schema compiled = REGISTRY.getSchema(wrapper);
        return compiled.validate(value).stream().map(Object::toString).toList();
    }

    /** The schema of the components named {@code name} ({@code Error}, {@code PidDetail} …). */
    public JsonNode schema(String name) {
        JsonNode schema = root.path("components").path("schemas").path(name);
        if (schema.isMissingNode()) {
            throw new IllegalArgumentException("no schema " + name);
        }
        return ApiJson.MAPPER.createObjectNode().put("$ref", "#/components/schemas/" + name);
    }

    /** Test hook: this document without the path {@code path} (to show the coverage check failing). */
    public OpenApiDocument without(String path) {
        JsonNode copy = root.deepCopy();
        ((ObjectNode) copy.get("paths")).remove(path);
        return new OpenApiDocument(copy);
    }
}
