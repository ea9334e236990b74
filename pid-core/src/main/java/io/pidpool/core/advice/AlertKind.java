package io.pidpool.core.advice;

/** What an {@link Alert} is about; each kind is raised by one rule of {@link AlertRules}. */
public enum AlertKind {
    /** A PID used at least a threshold share of its monthly quota (the highest threshold crossed). */
    PID_UTILISATION(true),
    /** A module's PIDs used at least a threshold share of their quotas together. */
    MODULE_UTILISATION(false),
    /** A module's projected overage cost is above the configured amount. */
    PROJECTED_OVERAGE(false),
    /** A module's projected demand exceeds the hard limits of its ACTIVE PIDs: it would be refused. */
    PROJECTED_REFUSAL(false),
    /** A PID is in cooldown after login failures or conflicts (account health). */
    PID_COOLDOWN(true),
    /** The planner's mass-failure brake is engaged in a module (maintenance mode). */
    BRAKE_ENGAGED(false),
    /** More PID alerts were due than the policy's cap: this one counts the rest. */
    PID_ALERTS_TRUNCATED(false),
    /**
     * An operational problem the leader reported while allocating (an instance that does not answer,
     * an unusable PID node, PIDs with no live instance to go to, a placement failure). Not raised by
     * {@link AlertRules}: the server stores what its leader reports.
     */
    LEADER_EVENT(false),
    /**
     * The usage ledger sync could not record usage events in the database ledger; the server then
     * catches the ledger up from Redis. Not raised by {@link AlertRules}: the server's sync raises it.
     */
    USAGE_LEDGER(false);

    private final boolean aboutPid;

    AlertKind(boolean aboutPid) {
        this.aboutPid = aboutPid;
    }

    /** Whether the subject is a PID (such alerts count against {@link AlertPolicy#maxPidAlerts()}). */
    public boolean aboutPid() {
        return aboutPid;
    }
}
