package io.pidpool.client.internal;

/**
 * Why a held PID is revoked, as a metric tag. {@link PidTracker} gives each revocation a reason
 * text for the log; {@link #of} maps those texts (the constants below, which the tracker uses) to
 * the cause.
 */
public enum RevokeCause {
    /** The leader moved or withdrew the PID: DELETING, DELETED, node deleted or handed to another session. */
    LEADER("leader"),
    /** The session is not provably alive: connection suspended or lost, lease expired, process paused. */
    SESSION("session"),
    /** {@code close()}. */
    CLOSE("close"),
    /** {@code onAssigned}/{@code onUpdated} overran the callback deadline and was abandoned. */
    DEADLINE("deadline"),
    /** The PID's node could not be read. */
    UNREADABLE("unreadable");

    static final String CLOSING = "the client is closing";
    static final String NOT_ALIVE = "the session is not provably alive";
    static final String NODE_UNREADABLE = "its node became unreadable";
    /** Part of every deadline reason ({@code ListenerDispatch}). */
    static final String DEADLINE_TEXT = "within the callback deadline";

    private final String tag;

    RevokeCause(String tag) {
        this.tag = tag;
    }

    public String tag() {
        return tag;
    }

    /** The cause of a revocation with this reason text. */
    static RevokeCause of(String why) {
        if (why == null) {
            return LEADER;
        }
        if (why.equals(CLOSING)) {
            return CLOSE;
        }
        if (why.equals(NOT_ALIVE)) {
            return SESSION;
        }
        if (why.equals(NODE_UNREADABLE)) {
            return UNREADABLE;
        }
        if (why.contains(DEADLINE_TEXT)) {
            return DEADLINE;
        }
        return LEADER;
    }
}
