package io.pidpool.client.internal;

import io.pidpool.core.error.Preconditions;
import java.time.Duration;

/**
 * Every interval the SDK uses, derived from the <em>negotiated</em> ZooKeeper session timeout T.
 *
 * <h2>Why the client stops in time (docs/architecture.md §4)</h2>
 *
 * <p>Let c be the last instant the ZooKeeper server heard from this client, and L the time {@code
 * onRevoked} needs to log out (the "logout allowance" the leader's grace period includes).
 *
 * <ul>
 *   <li><b>Server and leader.</b> The server expires the session no earlier than c + T; the leader
 *       sees the ephemeral node vanish after that and then waits the grace G = T/3 + D + L (D = the
 *       registered callback deadline) before it writes ADDING for the PID anywhere else. The earliest
 *       foreign login is therefore c + 4T/3 + D + L; a login in flight is over (returned, or
 *       abandoned and logged out) by q + 0.567T + D + L (docs/sdk.md "Timing").
 *       (Or the leader waits for this client's DELETED, which comes after {@code onRevoked} returned.)
 *   <li><b>Lease.</b> A successful reply to a request <em>sent</em> at q proves c ≥ q. The lease runs
 *       until q + {@link #leaseBudget()} = q + 2T/3 − m, with margin m = T/10, i.e. q + 0.567T. A
 *       reply is stamped with its request's send time, never its arrival time.
 *   <li><b>Detection.</b> The watchdog checks the lease every {@link #tickInterval()} = T/20, so the
 *       client notices an expired lease by q + 0.617T and has revoked by q + 0.617T + L. That is
 *       at least 0.717T before the earliest foreign login, because c ≥ q.
 *   <li><b>Heartbeat.</b> A {@code checkExists} of the instance node every {@link
 *       #heartbeatInterval()} = T/6 keeps the lease fresh: about 3.4 heartbeats fit in one budget,
 *       so one slow reply does not revoke anything. Every other successful operation (ack writes)
 *       also counts as a reply. Heartbeats go out every T/6 whether or not earlier ones were
 *       answered (at most {@link Heartbeats#MAX_OUTSTANDING} unanswered; one unanswered after T is
 *       given up), each reply is stamped with its own request's send time and the lease keeps the
 *       newest, so a late or reordered reply never moves it backwards. With a round trip R the
 *       newest answered send time is at worst R + T/6 old, so the lease lapses only once R exceeds
 *       budget − T/6 = 0.4T (2 s at T = 5 s); one heartbeat at a time (the next sent only after the
 *       previous reply) lapsed already at R above budget/2 = 0.283T. Safety does not change: a reply
 *       still proves c ≥ q for its own send time q only, and the lease still ends at q + budget for
 *       the newest such q, whatever number of requests are in flight.
 *   <li><b>Pauses.</b> A stopped process (GC, SIGSTOP) cannot check anything. The watchdog measures
 *       the gap between its ticks with the monotonic ticker; a gap above {@link #stallThreshold()} =
 *       T/3 counts as a stall: the lease is invalidated at once (replies to requests sent before
 *       the stall ends no longer count) and every PID is revoked, exactly as on SUSPENDED. A pause
 *       shorter than T/3 that begins right before the lease ends delays revocation to at most q +
 *       0.567T + T/3 + L = q + 0.9T + L, still before c + 4T/3 + L.
 *   <li><b>ZooKeeper's own view.</b> The ZooKeeper client declares the connection lost after 2T/3
 *       without traffic (Curator: SUSPENDED), which revokes as well; the lease usually fires first.
 * </ul>
 *
 * <p>Immutable; all values in nanoseconds.
 */
record Timing(long sessionTimeoutNanos) {
    Timing {
        Preconditions.requireArgument(
                sessionTimeoutNanos > 0,
                "sessionTimeout",
                "session timeout must be positive, was %d ns",
                sessionTimeoutNanos);
    }

    static Timing of(Duration sessionTimeout) {
        return new Timing(sessionTimeout.toNanos());
    }

    static Timing ofMillis(long sessionTimeoutMillis) {
        return new Timing(Duration.ofMillis(sessionTimeoutMillis).toNanos());
    }

    /** m = T/10: covers the time between a lease check and the use of the PID it allowed. */
    long margin() {
        return sessionTimeoutNanos / 10;
    }

    /** 2T/3 − m: how long a ZooKeeper reply keeps the lease valid, counted from its request's send time. */
    long leaseBudget() {
        return sessionTimeoutNanos * 2 / 3 - margin();
    }

    /** T/6: how often the client checks its instance node (and thereby its session). */
    long heartbeatInterval() {
        return sessionTimeoutNanos / 6;
    }

    /** T/20: how often the watchdog checks the lease and measures pauses. */
    long tickInterval() {
        return Math.max(sessionTimeoutNanos / 20, Duration.ofMillis(5).toNanos());
    }

    /** T/3: a gap between watchdog ticks longer than this is a process pause. */
    long stallThreshold() {
        return sessionTimeoutNanos / 3;
    }

    Duration sessionTimeout() {
        return Duration.ofNanos(sessionTimeoutNanos);
    }
}
