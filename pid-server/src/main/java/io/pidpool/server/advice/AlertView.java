package io.pidpool.server.advice;

import io.pidpool.core.advice.StoredAlert;
import java.time.Instant;

/**
 * An alert as the API lists it and the webhook sends it (JSON).
 *
 * @param resolvedAt null while open
 */
public record AlertView(
        long id,
        String key,
        String kind,
        String severity,
        String subject,
        String message,
        String state,
        long occurrences,
        Instant firstSeen,
        Instant lastSeen,
        Instant resolvedAt) {

    public static AlertView of(StoredAlert a) {
        return new AlertView(
                a.id(),
                a.key(),
                a.alert().kind().name(),
                a.alert().severity().name(),
                a.alert().subject(),
                a.alert().message(),
                a.state().name(),
                a.occurrences(),
                a.alert().firstSeen(),
                a.lastSeen(),
                a.resolvedAt().orElse(null));
    }
}
