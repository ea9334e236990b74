package io.pidpool.server.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.AlertStore;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.util.function.LongSupplier;

/**
 * Operators' acknowledgements of alerts ({@code POST /api/v1/alerts/{id}/ack}): the alert row and
 * its audit row ({@code alert.acknowledged}) are written in one transaction, so both or neither
 * exist. Acknowledging twice keeps the first acknowledgement and writes no second audit row.
 *
 * <p>Concurrency: runs on the calling (HTTP) thread, on any server. It writes only the
 * acknowledgement columns of a row it locks, so it never undoes what {@link AlertService}'s thread
 * writes (occurrences, resolution) at the same time.
 */
public final class AlertAcks {
    static final String ACTION = "alert.acknowledged";

    private final AlertStore store;
    private final Repositories repos;
    private final LongSupplier ids;
    private final Clock clock;

    /** @param repos over the same database as {@code store}, so both commit together */
    public AlertAcks(AlertStore store, Repositories repos, LongSupplier ids, Clock clock) {
        this.store = requireNonNull(store, "store");
        this.repos = requireNonNull(repos, "repos");
        this.ids = requireNonNull(ids, "ids");
        this.clock = requireNonNull(clock, "clock");
    }

    /**
     * Acknowledges alert {@code id} as {@code actor}; {@code NOT_FOUND} for an unknown id, {@code
     * CONFLICT} for a resolved alert.
     */
    public StoredAlert acknowledge(long id, String actor) {
        return repos.transactor().inTransaction(() -> {
            StoredAlert before = store.find(id).orElseThrow(() -> PidPoolException.notFound("id", "no alert %d", id));
            StoredAlert after = store.acknowledge(id, actor, clock.instant())
                    .orElseThrow(() -> PidPoolException.notFound("id", "no alert %d", id));
            if (before.acknowledged().isEmpty()) {
                repos.audit()
                        .append(new AuditEntry(
                                ids.getAsLong(),
                                clock.instant(),
                                actor,
                                ACTION,
                                String.valueOf(id),
                                after.alert().kind() + " " + after.alert().subject()));
            }
            return after;
        });
    }
}
