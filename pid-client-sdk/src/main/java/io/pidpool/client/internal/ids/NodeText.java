package io.pidpool.client.internal.ids;

import io.pidpool.core.error.PidPoolException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The text format of the worker-id nodes: {@code key=value} lines in UTF-8, so that an operator
 * reading a node with {@code zkCli get} sees who holds a slot. Decoding accepts unknown keys (a
 * newer writer may add some) and rejects everything malformed with {@code INVALID_ARGUMENT}.
 */
final class NodeText {
    static final int MAX_BYTES = 4096;

    private NodeText() {}

    static byte[] encode(Map<String, String> fields) {
        StringBuilder text = new StringBuilder(128);
        fields.forEach(
                (key, value) -> text.append(key).append('=').append(value).append('\n'));
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    static Map<String, String> decode(byte[] data, String kind) {
        if (data == null || data.length == 0) {
            throw PidPoolException.invalid(kind, "%s data is empty", kind);
        }
        if (data.length > MAX_BYTES) {
            throw PidPoolException.invalid(kind, "%s data is %d bytes, more than %d", kind, data.length, MAX_BYTES);
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            int eq = line.indexOf('=');
            if (eq <= 0) {
                throw PidPoolException.invalid(kind, "%s data has a line without key=value", kind);
            }
            fields.put(line.substring(0, eq), line.substring(eq + 1));
        }
        return fields;
    }

    static String required(Map<String, String> fields, String key, String kind) {
        String value = fields.get(key);
        if (value == null) {
            throw PidPoolException.invalid(kind, "%s data has no '%s'", kind, key);
        }
        return value;
    }

    static long number(Map<String, String> fields, String key, String kind) {
        String value = required(fields, key, kind);
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid(kind, "%s data has a malformed '%s'", kind, key);
        }
    }

    static String session(long sessionId) {
        return "0x" + Long.toHexString(sessionId);
    }

    static long session(Map<String, String> fields, String kind) {
        String value = required(fields, "session", kind);
        if (!value.startsWith("0x")) {
            throw PidPoolException.invalid(kind, "%s data has a malformed 'session'", kind);
        }
        try {
            return Long.parseUnsignedLong(value.substring(2), 16);
        } catch (NumberFormatException e) {
            throw PidPoolException.invalid(kind, "%s data has a malformed 'session'", kind);
        }
    }
}
