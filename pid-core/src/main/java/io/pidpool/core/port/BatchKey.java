package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.IdempotencyKey;
import java.util.regex.Pattern;

/**
 * An idempotency key as stored with the batch it made: per principal ({@code requestedBy}) one
 * batch per key; {@code fingerprint} identifies the request (64 lowercase hex characters, a SHA-256),
 * so a retry with the same key and another request can be told apart.
 */
public record BatchKey(String requestedBy, IdempotencyKey key, String fingerprint, BatchId batch) {
    private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");

    public BatchKey {
        requireArgument(requestedBy != null && !requestedBy.isBlank(), "requestedBy", "requestedBy is required");
        requireNonNull(key, IdempotencyKey.FIELD);
        requireArgument(
                fingerprint != null && HEX.matcher(fingerprint).matches(),
                "fingerprint",
                "fingerprint must be 64 lowercase hex characters");
        requireNonNull(batch, "batch");
    }
}
