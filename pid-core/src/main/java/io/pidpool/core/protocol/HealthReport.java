package io.pidpool.core.protocol;

import static io.pidpool.core.error.Preconditions.requireNonNull;

/**
 * What an SDK tells the leader about an account it was given (docs/design.md §5 "Account health"): the
 * third-party platform refused the login, or reported that somebody else is logged in with it. It
 * travels in the PID node ({@link PidNode#report()}), written by the holder with a versioned {@code
 * setData}; the leader answers by putting the PID into cooldown and withdrawing it (DELETING).
 *
 * @param detail free text for the operator (the platform's message); never a password. At most
 *     {@link #MAX_DETAIL} characters; longer text is cut.
 */
public record HealthReport(Kind kind, String detail) {
    public static final int MAX_DETAIL = 1000;

    public enum Kind {
        /** The platform refused the login (wrong password, account locked, ...). */
        LOGIN_FAILURE,
        /** The platform says the account is logged in elsewhere (a second terminal). */
        LOGIN_CONFLICT
    }

    public HealthReport {
        requireNonNull(kind, "kind");
        detail = detail == null ? "" : detail.strip();
        if (detail.length() > MAX_DETAIL) {
            detail = detail.substring(0, MAX_DETAIL);
        }
    }

    public static HealthReport loginFailure(String reason) {
        return new HealthReport(Kind.LOGIN_FAILURE, reason);
    }

    public static HealthReport loginConflict(String detail) {
        return new HealthReport(Kind.LOGIN_CONFLICT, detail);
    }

    /** For logs and alerts, e.g. {@code LOGIN_FAILURE (password expired)}. */
    public String describe() {
        return detail.isEmpty() ? kind.name() : kind + " (" + detail + ")";
    }
}
