package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;

/**
 * A condition that holds now, as {@link AlertRules} states it.
 *
 * @param key identifies the condition across evaluations: {@code KIND:subject} or {@code
 *     KIND:subject:threshold}; the same condition always gets the same key, so the server stores one
 *     row per key and notifies only on changes
 * @param subject a PID id, a module key, or {@code cluster}
 * @param message what holds, with the numbers; may change while the alert stays open
 * @param firstSeen when the condition was first seen holding (kept while it stays open)
 */
public record Alert(String key, AlertKind kind, Severity severity, String subject, String message, Instant firstSeen) {
    public Alert {
        requireArgument(key != null && !key.isBlank(), "alert.key", "alert.key is required");
        requireNonNull(kind, "alert.kind");
        requireNonNull(severity, "alert.severity");
        requireNonNull(subject, "alert.subject");
        requireNonNull(message, "alert.message");
        requireNonNull(firstSeen, "alert.firstSeen");
    }

    /** The same alert, first seen at {@code instant}. */
    public Alert withFirstSeen(Instant instant) {
        return new Alert(key, kind, severity, subject, message, instant);
    }
}
