package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.port.StorageLimits;
import java.time.Instant;
import java.util.Optional;

/**
 * One alert episode as the server keeps it: the latest {@link Alert} of its key, its state, and
 * when it was first and last seen. Instants are kept to the millisecond (as stored).
 *
 * @param id assigned by the caller (a Snowflake id)
 * @param alert the condition; {@link Alert#firstSeen()} is when this episode opened; severity and
 *     message are the latest seen
 * @param occurrences how many times the condition was reported while open ({@code >= 1}); a repeating
 *     condition raises this instead of a new alert
 * @param lastSeen when it was last reported
 * @param resolvedAt when it was resolved; present exactly when {@code state} is RESOLVED
 * @param acknowledged who acknowledged the episode and when; an acknowledgement is kept through
 *     repeats and the resolution of the episode (a new episode of the key starts unacknowledged)
 */
public record StoredAlert(
        long id,
        Alert alert,
        AlertState state,
        long occurrences,
        Instant lastSeen,
        Optional<Instant> resolvedAt,
        Optional<Acknowledgement> acknowledged) {
    /**
     * An operator's "seen, someone is on it" on an alert episode.
     *
     * @param by the token name of who acknowledged it
     */
    public record Acknowledgement(String by, Instant at) {
        public static final int MAX_BY = StorageLimits.MAX_ACTOR;

        public Acknowledgement {
            requireNonNull(by, "by");
            requireArgument(!by.isBlank() && by.length() <= MAX_BY, "by", "by must be 1..%d characters", MAX_BY);
            at = StorageLimits.stored(requireNonNull(at, "at"));
        }
    }

    /** Longest alert key stored. */
    public static final int MAX_KEY = 300;
    /** Longest subject stored. */
    public static final int MAX_SUBJECT = 256;
    /** Longest message stored; longer messages are cut, not refused. */
    public static final int MAX_MESSAGE = 4000;

    /** Not acknowledged. */
    public StoredAlert(
            long id, Alert alert, AlertState state, long occurrences, Instant lastSeen, Optional<Instant> resolvedAt) {
        this(id, alert, state, occurrences, lastSeen, resolvedAt, Optional.empty());
    }

    public StoredAlert {
        requireNonNull(acknowledged, "acknowledged");
        requireNonNull(alert, "alert");
        requireNonNull(state, "state");
        requireArgument(occurrences >= 1, "occurrences", "occurrences must be >= 1, was %d", occurrences);
        lastSeen = StorageLimits.stored(requireNonNull(lastSeen, "lastSeen"));
        resolvedAt = requireNonNull(resolvedAt, "resolvedAt").map(StorageLimits::stored);
        requireArgument(
                resolvedAt.isPresent() == (state == AlertState.RESOLVED),
                "resolvedAt",
                "resolvedAt must be set exactly when the alert is RESOLVED (state %s)",
                state);
        alert = storable(alert);
    }

    /** The alert as a store keeps it: key and subject checked, message cut, time to the millisecond. */
    public static Alert storable(Alert alert) {
        requireArgument(
                alert.key().length() <= MAX_KEY,
                "alert.key",
                "alert.key must be at most %d characters, was %d",
                MAX_KEY,
                alert.key().length());
        requireArgument(
                alert.subject().length() <= MAX_SUBJECT,
                "alert.subject",
                "alert.subject must be at most %d characters, was %d",
                MAX_SUBJECT,
                alert.subject().length());
        return new Alert(
                alert.key(),
                alert.kind(),
                alert.severity(),
                alert.subject(),
                StorageLimits.cut(alert.message(), MAX_MESSAGE),
                StorageLimits.stored(alert.firstSeen()));
    }

    public String key() {
        return alert.key();
    }

    public boolean isOpen() {
        return state == AlertState.OPEN;
    }

    /** A new episode of {@code alert}, open since {@code alert.firstSeen()}. */
    public static StoredAlert opened(long id, Alert alert) {
        return new StoredAlert(id, alert, AlertState.OPEN, 1, alert.firstSeen(), Optional.empty());
    }

    /** Reported again at {@code at}: latest severity and message, one more occurrence. */
    public StoredAlert seenAgain(Alert latest, Instant at) {
        requireArgument(isOpen(), "state", "alert %s is %s; only an OPEN alert is seen again", key(), state);
        requireArgument(latest.key().equals(key()), "alert.key", "alert %s is not %s", latest.key(), key());
        return new StoredAlert(
                id,
                latest.withFirstSeen(alert.firstSeen()),
                state,
                occurrences + 1,
                at,
                Optional.empty(),
                acknowledged);
    }

    /** This episode, resolved at {@code at}. */
    public StoredAlert resolved(Instant at) {
        AlertState.RESOLVED.assertCanFollow(state);
        return new StoredAlert(id, alert, AlertState.RESOLVED, occurrences, lastSeen, Optional.of(at), acknowledged);
    }

    /**
     * This episode acknowledged by {@code by} at {@code at}; an episode acknowledged already keeps
     * its first acknowledgement (so a retry changes nothing). Only an OPEN alert can be acknowledged.
     */
    public StoredAlert acknowledgedBy(String by, Instant at) {
        if (!isOpen()) {
            throw io.pidpool.core.error.PidPoolException.conflict(
                    "id", "alert %d is %s; only an OPEN alert can be acknowledged", id, state);
        }
        if (acknowledged.isPresent()) {
            return this;
        }
        return new StoredAlert(
                id, alert, state, occurrences, lastSeen, resolvedAt, Optional.of(new Acknowledgement(by, at)));
    }
}
