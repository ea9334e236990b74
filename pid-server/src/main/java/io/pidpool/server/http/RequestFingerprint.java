package io.pidpool.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/**
 * What identifies a batch request for its idempotency key: the SHA-256 (hex) of the body in a
 * canonical form (object fields sorted by name, no whitespace), with every PID's {@code secret}
 * replaced by a placeholder. Key order and formatting therefore do not matter; content does.
 *
 * <p>Secrets are left out so that no digest of a password is ever stored: a database reader could
 * test guesses against it. The price: two requests that differ only in a password count as the same
 * (docs/http-api.md). Stateless.
 */
final class RequestFingerprint {
    private static final String SECRET = "secret";

    private RequestFingerprint() {}

    static String of(JsonNode body) {
        StringBuilder canonical = new StringBuilder();
        write(body, false, canonical);
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(canonical.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @param inPids whether {@code node} is an element of a {@code pids} array */
    private static void write(JsonNode node, boolean inPids, StringBuilder out) {
        if (node.isObject()) {
            List<String> names = new ArrayList<>();
            node.fieldNames().forEachRemaining(names::add);
            Collections.sort(names);
            out.append('{');
            for (int i = 0; i < names.size(); i++) {
                String name = names.get(i);
                if (i > 0) {
                    out.append(',');
                }
                out.append(quoted(name)).append(':');
                if (inPids && name.equals(SECRET)) {
                    out.append("\"(secret)\"");
                } else {
                    JsonNode child = node.get(name);
                    if (name.equals("pids") && child.isArray()) {
                        writeArray(child, true, out);
                    } else {
                        write(child, false, out);
                    }
                }
            }
            out.append('}');
        } else if (node.isArray()) {
            writeArray(node, false, out);
        } else {
            out.append(node.toString()); // scalars as JSON text: "a" and 1 stay apart
        }
    }

    private static void writeArray(JsonNode array, boolean pids, StringBuilder out) {
        out.append('[');
        for (int i = 0; i < array.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            write(array.get(i), pids, out);
        }
        out.append(']');
    }

    private static String quoted(String name) {
        return com.fasterxml.jackson.databind.node.TextNode.valueOf(name).toString();
    }
}
