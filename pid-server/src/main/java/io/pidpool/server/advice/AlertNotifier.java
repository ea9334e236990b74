package io.pidpool.server.advice;

import io.pidpool.core.advice.StoredAlert;

/**
 * Where the server announces alert changes beyond its log and store (the webhook). Called on the
 * alert service's thread once per change: a new episode ({@link Event#RAISED}) or its end ({@link
 * Event#RESOLVED}); never for a repeat of an open alert. Must not block for long.
 */
@FunctionalInterface
public interface AlertNotifier {
    enum Event {
        RAISED,
        RESOLVED
    }

    void notify(Event event, StoredAlert alert);

    static AlertNotifier none() {
        return (event, alert) -> {};
    }
}
