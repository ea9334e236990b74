package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;
import java.util.Optional;

/**
 * The failed outcome of one claimed task: back to PENDING at {@code retryAt}, or FAILED for good
 * when {@code retryAt} is empty.
 */
public record Failure(long id, String error, Optional<Instant> retryAt) {
    public static final int MAX_ERROR_CHARS = 2000;

    public Failure {
        requireNonNull(error, "error");
        requireNonNull(retryAt, "retryAt");
        if (error.length() > MAX_ERROR_CHARS) {
            error = error.substring(0, MAX_ERROR_CHARS);
        }
    }

    public static Failure retry(long id, String error, Instant at) {
        return new Failure(id, error, Optional.of(at));
    }

    public static Failure permanent(long id, String error) {
        return new Failure(id, error, Optional.empty());
    }
}
