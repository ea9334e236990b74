package io.pidpool.worker.task;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import io.pidpool.core.ring.ConsistentHashRing;
import java.time.Instant;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A task to insert. The {@code key} decides the slot ({@link ConsistentHashRing#slotOf}) and so the
 * worker that runs it: tasks with one key always land in one range (for example all usage events
 * of one PID). {@code notBefore} delays the first attempt.
 *
 * @param group worker group that runs it (a token, e.g. {@code default})
 * @param type handler type, 1..128 characters of {@code [A-Za-z0-9_.:-]}
 * @param key partition key, 1..255 characters
 * @param body payload handed to the handler as is (JSON by convention), at most 1,000,000 chars
 * @param maxAttempts how many times a worker may claim it before it ends FAILED (1..100)
 * @param notBefore earliest first attempt, or empty for "now"
 */
public record NewTask(
        String group, String type, String key, String body, int maxAttempts, Optional<Instant> notBefore) {
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    public static final int MAX_BODY_CHARS = 1_000_000;

    /** What a task type may be (no comma: ring nodes list types comma-separated). */
    public static final Pattern TYPE = Pattern.compile("[A-Za-z0-9_.:\\-]{1,128}");

    /** Checks a task type against {@link #TYPE}. */
    public static String requireType(String type) {
        requireNonNull(type, "type");
        requireArgument(
                TYPE.matcher(type).matches(),
                "type",
                "task type must be 1-128 characters of [A-Za-z0-9_.:-], was '%s'",
                type);
        return type;
    }

    public NewTask {
        Names.requireToken(group, "group");
        requireType(type);
        requireNonNull(key, "key");
        requireArgument(
                !key.isEmpty() && key.length() <= 255, "key", "key must be 1-255 characters, was %d", key.length());
        requireNonNull(body, "body");
        requireArgument(
                body.length() <= MAX_BODY_CHARS,
                "body",
                "body must be at most %d characters, was %d",
                MAX_BODY_CHARS,
                body.length());
        requireArgument(
                maxAttempts >= 1 && maxAttempts <= 100,
                "maxAttempts",
                "maxAttempts must be in 1..100, was %d",
                maxAttempts);
        requireNonNull(notBefore, "notBefore");
    }

    /** A task with the default number of attempts, due at once. */
    public static NewTask of(String group, String type, String key, String body) {
        return new NewTask(group, type, key, body, DEFAULT_MAX_ATTEMPTS, Optional.empty());
    }

    public NewTask withMaxAttempts(int attempts) {
        return new NewTask(group, type, key, body, attempts, notBefore);
    }

    public NewTask withNotBefore(Instant instant) {
        return new NewTask(group, type, key, body, maxAttempts, Optional.of(instant));
    }

    /** The slot this task lands in: {@code ConsistentHashRing.slotOf(key)}. */
    public long slot() {
        return ConsistentHashRing.slotOf(key);
    }
}
