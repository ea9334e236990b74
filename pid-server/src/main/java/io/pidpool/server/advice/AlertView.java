package io.pidpool.server.advice;

import io.pidpool.core.advice.StoredAlert;
import java.time.Instant;

/**
 * An alert as the API lists it and the webhook sends it (JSON).
 *
 * @param id text: Snowflake ids exceed 2^53, which JavaScript numbers cannot hold
 * @param resolvedAt null while open
 * @param acknowledgedBy who acknowledged the episode (the token's name), null if nobody has
 * @param acknowledgedAt when, null if nobody has
 */
public record AlertView(
        String id,
        String key,
        String kind,
        String severity,
        String subject,
        String message,
        String state,
        long occurrences,
        Instant firstSeen,
        Instant lastSeen,
        Instant resolvedAt,
        String acknowledgedBy,
        Instant acknowledgedAt) {

    public static AlertView of(StoredAlert a) {
        return new AlertView(
                String.valueOf(a.id()),
                a.key(),
                a.alert().kind().name(),
                a.alert().severity().name(),
                a.alert().subject(),
                a.alert().message(),
                a.state().name(),
                a.occurrences(),
                a.alert().firstSeen(),
                a.lastSeen(),
                a.resolvedAt().orElse(null),
                a.acknowledged().map(StoredAlert.Acknowledgement::by).orElse(null),
                a.acknowledged().map(StoredAlert.Acknowledgement::at).orElse(null));
    }
}
