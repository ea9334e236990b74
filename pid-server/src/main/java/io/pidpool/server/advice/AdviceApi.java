package io.pidpool.server.advice;

import io.pidpool.core.advice.Recommendations;
import io.pidpool.core.advice.StoredAlert;
import java.util.List;
import java.util.Optional;

/**
 * What {@code GET /api/v1/alerts} and {@code GET /api/v1/recommendations} read. Thread-safe; throws
 * {@link io.pidpool.core.error.PidPoolException} only ({@code UNAVAILABLE} when the database or
 * Redis cannot be reached).
 */
public interface AdviceApi {
    /** Every open alert, oldest first. */
    List<StoredAlert> openAlerts();

    /** The newest alerts of any state, newest first. */
    List<StoredAlert> recentAlerts(int limit);

    /** Recommendations on the latest usage report; empty while there is none. */
    Optional<Recommendations> recommendations();

    /**
     * Acknowledges an open alert as {@code actor} (audited); {@code NOT_FOUND} for an unknown id,
     * {@code CONFLICT} for a resolved one. A second acknowledgement keeps the first.
     */
    StoredAlert acknowledge(long id, String actor);
}
