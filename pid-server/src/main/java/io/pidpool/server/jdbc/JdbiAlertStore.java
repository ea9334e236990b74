package io.pidpool.server.jdbc;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertState;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.error.Preconditions;
import io.pidpool.core.port.AlertStore;
import io.pidpool.core.port.StorageLimits;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.Handle;

/**
 * {@link AlertStore} on table {@code alert} (V3). One OPEN row per key is kept by the unique column
 * {@code open_key} (the key while OPEN, NULL once RESOLVED).
 *
 * <p>A raise reads the key's open row with {@code FOR UPDATE} and updates it, or inserts a new one.
 * Two raises of a new key at once both find nothing and both insert; the loser violates {@code
 * uq_alert_open}, its transaction rolls back, and it runs again, now finding the winner's row. So
 * concurrent raises of one key leave one OPEN row counting every occurrence. Thread-safe.
 */
final class JdbiAlertStore implements AlertStore {
    private static final int RAISE_ATTEMPTS = 5;
    private static final String SELECT = "SELECT alert_id, alert_key, alert_kind, severity, subject, message,"
            + " alert_state, occurrences, first_seen, last_seen, resolved_at, acked_by, acked_at FROM alert";

    private final JdbiSession session;

    JdbiAlertStore(JdbiSession session) {
        this.session = session;
    }

    @Override
    public Raised raise(long id, Alert alert, Instant now) {
        Preconditions.requireNonNull(alert, "alert");
        Preconditions.requireNonNull(now, "now");
        Alert storable = StoredAlert.storable(alert);
        for (int attempt = 1; ; attempt++) {
            try {
                return session.write(null, h -> raiseOnce(h, id, storable, now));
            } catch (PidPoolException e) {
                // a concurrent raise opened the key first (uq_alert_open): read it again
                if (e.code() != ErrorCode.CONFLICT || "id".equals(e.field()) || attempt >= RAISE_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    private Raised raiseOnce(Handle h, long id, Alert alert, Instant now) {
        Optional<StoredAlert> open = h.createQuery(SELECT + " WHERE open_key = :key FOR UPDATE")
                .bind("key", alert.key())
                .map((rs, ctx) -> row(rs))
                .findOne();
        if (open.isPresent()) {
            StoredAlert updated = open.get().seenAgain(alert, now);
            h.createUpdate("UPDATE alert SET severity = :severity, message = :message, occurrences = :occurrences,"
                            + " last_seen = :lastSeen WHERE alert_id = :id")
                    .bind("severity", updated.alert().severity().name())
                    .bind("message", updated.alert().message())
                    .bind("occurrences", updated.occurrences())
                    .bind("lastSeen", Rows.toDb(updated.lastSeen()))
                    .bind("id", updated.id())
                    .execute();
            return new Raised(updated, false);
        }
        boolean taken = h.createQuery("SELECT COUNT(*) FROM alert WHERE alert_id = :id")
                        .bind("id", id)
                        .mapTo(Long.class)
                        .one()
                > 0;
        if (taken) {
            throw PidPoolException.conflict("id", "alert %d already exists", id);
        }
        StoredAlert created = StoredAlert.opened(id, alert);
        h.createUpdate("INSERT INTO alert (alert_id, alert_key, open_key, alert_kind, severity, subject, message,"
                        + " alert_state, occurrences, first_seen, last_seen, resolved_at) VALUES (:id, :key, :key,"
                        + " :kind, :severity, :subject, :message, 'OPEN', 1, :firstSeen, :lastSeen, NULL)")
                .bind("id", id)
                .bind("key", alert.key())
                .bind("kind", alert.kind().name())
                .bind("severity", alert.severity().name())
                .bind("subject", alert.subject())
                .bind("message", alert.message())
                .bind("firstSeen", Rows.toDb(created.alert().firstSeen()))
                .bind("lastSeen", Rows.toDb(created.lastSeen()))
                .execute();
        return new Raised(created, true);
    }

    @Override
    public Optional<StoredAlert> resolve(String key, Instant now) {
        Preconditions.requireNonNull(key, "key");
        Preconditions.requireNonNull(now, "now");
        return session.write(null, h -> {
            Optional<StoredAlert> open = h.createQuery(SELECT + " WHERE open_key = :key FOR UPDATE")
                    .bind("key", key)
                    .map((rs, ctx) -> row(rs))
                    .findOne();
            if (open.isEmpty()) {
                return Optional.empty();
            }
            StoredAlert resolved = open.get().resolved(now);
            h.createUpdate("UPDATE alert SET alert_state = 'RESOLVED', open_key = NULL, resolved_at = :at"
                            + " WHERE alert_id = :id")
                    .bind("at", Rows.toDb(resolved.resolvedAt().orElseThrow()))
                    .bind("id", resolved.id())
                    .execute();
            return Optional.of(resolved);
        });
    }

    @Override
    public List<StoredAlert> open() {
        return session.read(h -> h.createQuery(SELECT + " WHERE alert_state = 'OPEN' ORDER BY first_seen, alert_id")
                .map((rs, ctx) -> row(rs))
                .list());
    }

    @Override
    public List<StoredAlert> recent(int limit) {
        StorageLimits.requireLimit(limit);
        return session.read(h -> h.createQuery(
                        SELECT + " ORDER BY first_seen DESC, alert_id DESC FETCH FIRST " + limit + " ROWS ONLY")
                .map((rs, ctx) -> row(rs))
                .list());
    }

    @Override
    public Optional<StoredAlert> find(long id) {
        return session.read(h -> h.createQuery(SELECT + " WHERE alert_id = :id")
                .bind("id", id)
                .map((rs, ctx) -> row(rs))
                .findOne());
    }

    @Override
    public Optional<StoredAlert> acknowledge(long id, String by, Instant now) {
        Preconditions.requireNonNull(by, "by");
        Preconditions.requireNonNull(now, "now");
        return session.write(null, h -> {
            Optional<StoredAlert> found = h.createQuery(SELECT + " WHERE alert_id = :id FOR UPDATE")
                    .bind("id", id)
                    .map((rs, ctx) -> row(rs))
                    .findOne();
            if (found.isEmpty()) {
                return Optional.empty();
            }
            StoredAlert acked = found.get().acknowledgedBy(by, now);
            if (acked != found.get()) {
                StoredAlert.Acknowledgement ack = acked.acknowledged().orElseThrow();
                h.createUpdate("UPDATE alert SET acked_by = :by, acked_at = :at WHERE alert_id = :id")
                        .bind("by", ack.by())
                        .bind("at", Rows.toDb(ack.at()))
                        .bind("id", id)
                        .execute();
            }
            return Optional.of(acked);
        });
    }

    private static StoredAlert row(ResultSet rs) throws SQLException {
        Alert alert = new Alert(
                rs.getString("alert_key"),
                AlertKind.valueOf(rs.getString("alert_kind")),
                Severity.valueOf(rs.getString("severity")),
                rs.getString("subject"),
                rs.getString("message"),
                Rows.instant(rs, "first_seen"));
        AlertState state = AlertState.valueOf(rs.getString("alert_state"));
        return new StoredAlert(
                rs.getLong("alert_id"),
                alert,
                state,
                rs.getLong("occurrences"),
                Rows.instant(rs, "last_seen"),
                rs.getObject("resolved_at", java.time.LocalDateTime.class) == null
                        ? Optional.empty()
                        : Optional.of(Rows.instant(rs, "resolved_at")),
                rs.getString("acked_by") == null
                        ? Optional.empty()
                        : Optional.of(new StoredAlert.Acknowledgement(
                                rs.getString("acked_by"), Rows.instant(rs, "acked_at"))));
    }
}
