package io.pidpool.core.port;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import io.pidpool.core.model.Names;
import java.time.Instant;

/**
 * A PID the leader does not hand out before {@code until}: a holder reported a login failure or a
 * login conflict, or it could not be taken up several times in a row. Stored, so that a new leader
 * keeps the end time instead of starting the cooldown over.
 *
 * @param until wall-clock end (UTC, stored with millisecond precision)
 * @param cause why, for operators (e.g. {@code LOGIN_CONFLICT (second terminal) reported by host-1});
 *     at most {@link #MAX_CAUSE} characters, longer text is cut
 * @param startedAt when the cooldown began
 */
public record Cooldown(String pidId, Instant until, String cause, Instant startedAt) {
    public static final int MAX_CAUSE = StorageLimits.MAX_RESULT_MESSAGE;

    public Cooldown {
        Names.requirePidId(pidId, "pid.id");
        requireNonNull(until, "until");
        requireNonNull(startedAt, "startedAt");
        requireArgument(!until.isBefore(startedAt), "until", "until %s is before startedAt %s", until, startedAt);
        cause = cause == null ? "" : cause;
        if (cause.length() > MAX_CAUSE) {
            cause = cause.substring(0, MAX_CAUSE);
        }
        until = StorageLimits.stored(until);
        startedAt = StorageLimits.stored(startedAt);
    }
}
