package io.pidpool.server.http;

import java.util.Objects;

/**
 * A write request (POST, PUT, PATCH, DELETE) that the API refused with a 4xx, as written to the
 * audit trail. Holds no body, no query and no header: nothing a secret could hide in. The message is
 * the API's own error message, which never repeats a secret.
 *
 * @param actor the token's name, or {@value #ANONYMOUS} without a valid token
 * @param field the offending field, or {@code null}
 * @param remote the client's address
 */
public record RejectedWrite(
        String actor,
        String method,
        String path,
        int status,
        String code,
        String field,
        String message,
        String remote) {
    public static final String ANONYMOUS = "anonymous";

    public RejectedWrite {
        Objects.requireNonNull(actor, "actor");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
    }

    /** {@code POST /api/v1/batches}, cut to the audit target's length. */
    public String target() {
        String target = method + " " + path;
        return target.length() <= 256 ? target : target.substring(0, 256);
    }

    /** {@code 400 INVALID_ARGUMENT operations[0].module: <message> (from 127.0.0.1)}. */
    public String detail() {
        return status + " " + code + (field == null ? "" : " " + field) + ": " + message
                + (remote == null ? "" : " (from " + remote + ")");
    }
}
