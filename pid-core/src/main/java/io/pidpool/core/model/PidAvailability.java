package io.pidpool.core.model;

/** Whether a PID may be handed out. */
public enum PidAvailability {
    /** Assignable. */
    ACTIVE,
    /** Recently failed to log in or met a login conflict: not assigned until the cooldown ends. */
    COOLDOWN,
    /** Taken out of service by an operator. */
    DISABLED;

    public boolean assignable() {
        return this == ACTIVE;
    }
}
