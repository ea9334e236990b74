package io.pidpool.core.advice;

import io.pidpool.core.error.PidPoolException;

/**
 * Where a stored alert is. An alert is raised OPEN; while its condition keeps holding it stays OPEN
 * (the store de-duplicates by key, counting occurrences); when the condition stops holding it is
 * RESOLVED, which is final: the same condition holding again later opens a new alert, so the history
 * shows each episode.
 */
public enum AlertState {
    OPEN,
    RESOLVED;

    /** Whether an alert may enter this state from {@code from} ({@code null}: newly raised). */
    public boolean canFollow(AlertState from) {
        return switch (this) {
            case OPEN -> from == null;
            case RESOLVED -> from == OPEN;
        };
    }

    /** Returns this state, or throws {@code ILLEGAL_STATE} saying which move was refused. */
    public AlertState assertCanFollow(AlertState from) {
        if (!canFollow(from)) {
            throw PidPoolException.illegalState(
                    "an alert cannot go from %s to %s", from == null ? "(new)" : from, this);
        }
        return this;
    }

    public boolean isFinal() {
        return this == RESOLVED;
    }
}
