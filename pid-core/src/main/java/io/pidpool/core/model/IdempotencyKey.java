package io.pidpool.core.model;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.util.regex.Pattern;

/**
 * An operator's idempotency key for a batch (the HTTP header {@code Idempotency-Key}): 1..128
 * characters of {@code [A-Za-z0-9_.:-]}, enough for a UUID, a ULID or {@code job-42:attempt}.
 * Scoped to the principal that sends it (docs/http-api.md, "Idempotency keys").
 */
public record IdempotencyKey(String value) {
    /** The field name in errors: the HTTP header. */
    public static final String FIELD = "Idempotency-Key";

    public static final int MAX_LENGTH = 128;
    private static final Pattern FORM = Pattern.compile("[A-Za-z0-9_.:-]{1," + MAX_LENGTH + "}");

    public IdempotencyKey {
        requireArgument(value != null, FIELD, "%s is required", FIELD);
        requireArgument(
                FORM.matcher(value).matches(),
                FIELD,
                "%s must be 1-%d characters of [A-Za-z0-9_.:-], was %d characters",
                FIELD,
                MAX_LENGTH,
                value.length());
    }

    @Override
    public String toString() {
        return value;
    }
}
