package io.pidpool.core.model;

import io.pidpool.core.error.PidPoolException;

/**
 * The state written in a PID node under {@code /modules/<module>/<instance>-pids/<pid>}. The leader
 * writes the -ING states, the SDK answers with the -ED states . This enum owns the
 * transition table; nobody else decides which edge is legal.
 */
public enum PidState {
    ADDING,
    ADDED,
    UPDATING,
    UPDATED,
    DELETING,
    DELETED;

    /**
     * Whether a node may move from {@code from} to this state. {@code from == null} means the node
     * is being created.
     */
    public boolean canFollow(PidState from) {
        return switch (this) {
            // the first state of a node; re-sent unanswered by a new leader to stamp it with its epoch
            // (the SDK ignores instructions older than the newest epoch it has seen)
            case ADDING -> from == null || from == ADDING;
            case ADDED -> from == ADDING;
            // an update may be re-sent while the previous one is unanswered
            case UPDATING -> from == ADDED || from == UPDATED || from == UPDATING;
            case UPDATED -> from == UPDATING;
            // a failed or unanswered ADDING/UPDATING is withdrawn by DELETING; an unanswered DELETING
            // is re-sent by a new leader to stamp it with its epoch
            case DELETING -> from == ADDING || from == ADDED || from == UPDATING || from == UPDATED || from == DELETING;
            // DELETING answered, or a voluntary release: on close() the SDK revokes and writes
            // DELETED over whatever it had, so the leader may move the PID without the grace period
            case DELETED -> from != null && from != DELETED;
        };
    }

    /** Throws {@link io.pidpool.core.error.ErrorCode#ILLEGAL_STATE} unless this state may follow {@code from}. */
    public PidState assertCanFollow(PidState from) {
        if (!canFollow(from)) {
            throw PidPoolException.illegalState(
                    "PID node cannot go from %s to %s", from == null ? "(new)" : from, this);
        }
        return this;
    }

    /** Written by the leader (an instruction), as opposed to by the SDK (an answer). */
    public boolean isInstruction() {
        return this == ADDING || this == UPDATING || this == DELETING;
    }

    /**
     * Whether the instance counts as holding the account in this state, or may be holding it: every
     * state but DELETED. The leader never hands such a PID to another instance.
     */
    public boolean mayHold() {
        return this != DELETED;
    }

    /** The SDK's answer to this instruction. */
    public PidState ack() {
        return switch (this) {
            case ADDING -> ADDED;
            case UPDATING -> UPDATED;
            case DELETING -> DELETED;
            case ADDED, UPDATED, DELETED ->
                throw PidPoolException.illegalState("%s is an answer, not an instruction", this);
        };
    }
}
