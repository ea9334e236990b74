package io.pidpool.core.port;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.StoredAlert;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Alerts the server raised, open and resolved ("stored, listed at {@code GET
 * /api/v1/alerts}").
 *
 * <p><b>De-duplication.</b> At most one alert per key is OPEN at a time. Raising a key that is open
 * does not add an alert: it updates the open one (latest severity and message, {@code lastSeen},
 * one more occurrence) and reports {@code created == false}, so a repeating condition notifies
 * once. Once resolved, the same key raised again opens a new episode with a new id.
 *
 * <p>Every method is atomic. Thread-safe; concurrent raises of one key still leave one OPEN alert.
 */
public interface AlertStore {
    /** The outcome of {@link #raise}: the alert as stored now, and whether a new episode opened. */
    record Raised(StoredAlert alert, boolean created) {}

    /**
     * Opens {@code alert} under {@code id}, or, when its key is already open, records one more
     * occurrence of that one at {@code now} ({@code id} is then unused).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} when the key or
     *     subject is too long ({@link StoredAlert#MAX_KEY}, {@link StoredAlert#MAX_SUBJECT});
     *     {@code CONFLICT} on {@code id} when a new episode would reuse an existing id
     */
    Raised raise(long id, Alert alert, Instant now);

    /** Resolves the open alert of {@code key} at {@code now}; empty when none is open. */
    Optional<StoredAlert> resolve(String key, Instant now);

    /** Every OPEN alert, oldest first (by first seen, then id). */
    List<StoredAlert> open();

    /** The newest alerts of any state, newest first (by first seen, then id). */
    List<StoredAlert> recent(int limit);

    Optional<StoredAlert> find(long id);

    /**
     * Acknowledges alert {@code id} ({@link StoredAlert#acknowledgedBy}): the alert as stored now,
     * or empty when there is no such alert. An acknowledged alert keeps its first acknowledgement.
     *
     * @throws io.pidpool.core.error.PidPoolException {@code CONFLICT} on {@code id} when the alert is
     *     resolved
     */
    Optional<StoredAlert> acknowledge(long id, String by, Instant now);
}
