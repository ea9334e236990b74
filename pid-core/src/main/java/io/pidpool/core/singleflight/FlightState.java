package io.pidpool.core.singleflight;

/**
 * Where one flight (the callers of one key in one process) stands. The transitions live in {@link
 * #canFollow}, nowhere else:
 *
 * <ul>
 *   <li>{@code IDLE}: created, not started. Moves to COMPETING.
 *   <li>{@code COMPETING}: reads the result node; a usable result ends the flight (DONE or FAILED);
 *       otherwise tries the key's lock: won → RUNNING, held by another → WAITING. The deadline
 *       passed or ZooKeeper unreachable → FAILED.
 *   <li>{@code RUNNING}: this process holds the lock and runs the work; the outcome is published
 *       (success → DONE, the work threw → FAILED). A holder fenced off before it could publish goes
 *       back to COMPETING and takes whatever the cluster decided.
 *   <li>{@code WAITING}: another participant holds the lock; when its lock node is gone (or the wait
 *       is woken otherwise) → COMPETING, which first checks for the result.
 *   <li>{@code DONE}, {@code FAILED}: final; the callers have their answer. FAILED may follow any
 *       state that is not final: every step may find ZooKeeper unreachable (or, from IDLE, the
 *       executor may refuse the flight).
 * </ul>
 */
public enum FlightState {
    IDLE,
    COMPETING,
    RUNNING,
    WAITING,
    DONE,
    FAILED;

    /** Whether a flight may move from {@code from} to this state. */
    public boolean canFollow(FlightState from) {
        return switch (this) {
            case IDLE -> false; // only as the first state
            case COMPETING -> from == IDLE || from == WAITING || from == RUNNING;
            case RUNNING, WAITING -> from == COMPETING;
            case DONE -> from == COMPETING || from == RUNNING;
            case FAILED -> !from.isFinal(); // any step may find ZooKeeper unreachable
        };
    }

    public boolean isFinal() {
        return this == DONE || this == FAILED;
    }
}
