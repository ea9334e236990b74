package io.pidpool.core.advice;

/** How urgent an {@link Alert} is. */
public enum Severity {
    /** Worth knowing; nothing to do yet. */
    INFO,
    /** Needs attention this month: quota running low, overage projected, an account unhealthy. */
    WARNING,
    /** Needs attention now: quota used up, demand about to be refused, mass failure. */
    CRITICAL;

    /** Whether this is at least as urgent as {@code other}. */
    public boolean atLeast(Severity other) {
        return compareTo(other) >= 0;
    }
}
