package io.pidpool.server.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * {@code GET /api/v1/openapi.json} (public): the OpenAPI 3.1 description of this API, a static
 * resource kept next to the code ({@link #RESOURCE}). It is written by hand rather than generated
 * so that it carries the contract's prose, examples and error shapes; {@code OpenApiDocumentTest}
 * keeps it true (every registered route described, every example valid against its schema).
 */
final class OpenApiRoutes implements ApiRoutes {
    static final String PATH = "/api/v1/openapi.json";
    static final String RESOURCE = "/io/pidpool/server/http/openapi.json";

    private final byte[] document;

    OpenApiRoutes() {
        this.document = load();
    }

    static byte[] load() {
        try (InputStream in = OpenApiRoutes.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the OpenAPI document " + RESOURCE + " is not on the class path");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + RESOURCE + " failed", e);
        }
    }

    @Override
    public void register(Routes routes) {
        routes.getPublic(PATH, ctx -> ctx.status(200).contentType(Routes.JSON).result(document));
    }
}
