package io.pidpool.server.leader;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Duration;

/**
 * The leader's knobs. Durations are measured on the monotonic {@link io.pidpool.core.port.Ticker}.
 *
 * @param grace how long a departed instance's PIDs stay untouchable after its ephemeral node
 *     vanished; {@code null} = {@link #graceFor(Duration) T/3 + logoutAllowance} with T the
 *     negotiated session timeout
 * @param logoutAllowance how long a client may take to log out of all its PIDs (docs/design.md §6)
 * @param rebalanceDelay how long a departed instance's share waits for a replacement (policy input)
 * @param ackTimeout an ADDING left unanswered this long is withdrawn (DELETING) and counted as a failure
 * @param maxFailures after this many failed ADDINGs in a row a PID goes into cooldown
 * @param retryBackoff after one failed ADDING the PID is not offered again for this long
 * @param cooldown how long a PID stays in cooldown
 * @param reconcileInterval level-triggered pass: reload the database, diff, repair
 * @param rescanInterval full ZooKeeper re-read (watches can miss events)
 * @param batchPollInterval how often the leader looks for pending batches besides /notify
 * @param maxOpsPerMulti operations per fenced multi-op, epoch check included
 * @param maxInFlightMultis multi-ops in flight at once
 * @param zkTimeout how long a blocking ZooKeeper step of the election (bump, sync, scan) may take
 */
public record LeaderSettings(
        Duration grace,
        Duration logoutAllowance,
        Duration rebalanceDelay,
        Duration ackTimeout,
        int maxFailures,
        Duration retryBackoff,
        Duration cooldown,
        Duration reconcileInterval,
        Duration rescanInterval,
        Duration batchPollInterval,
        int maxOpsPerMulti,
        int maxInFlightMultis,
        Duration zkTimeout) {

    public LeaderSettings {
        requireNonNull(logoutAllowance, "logoutAllowance");
        requireNonNull(rebalanceDelay, "rebalanceDelay");
        requireNonNull(ackTimeout, "ackTimeout");
        requireNonNull(retryBackoff, "retryBackoff");
        requireNonNull(cooldown, "cooldown");
        requireNonNull(reconcileInterval, "reconcileInterval");
        requireNonNull(rescanInterval, "rescanInterval");
        requireNonNull(batchPollInterval, "batchPollInterval");
        requireNonNull(zkTimeout, "zkTimeout");
        requireArgument(grace == null || !grace.isNegative(), "grace", "grace must not be negative");
        requireArgument(maxFailures >= 1, "maxFailures", "maxFailures must be >= 1, was %d", maxFailures);
        requireArgument(
                !reconcileInterval.isZero() && !reconcileInterval.isNegative(), "reconcileInterval", "must be > 0");
        requireArgument(!rescanInterval.isZero() && !rescanInterval.isNegative(), "rescanInterval", "must be > 0");
        requireArgument(
                !batchPollInterval.isZero() && !batchPollInterval.isNegative(), "batchPollInterval", "must be > 0");
        requireArgument(maxOpsPerMulti >= 2 && maxOpsPerMulti <= 1000, "maxOpsPerMulti", "must be within 2..1000");
        requireArgument(maxInFlightMultis >= 1 && maxInFlightMultis <= 64, "maxInFlightMultis", "must be within 1..64");
    }

    public static LeaderSettings defaults() {
        return new LeaderSettings(
                null,
                Duration.ofSeconds(2),
                Duration.ofMinutes(1),
                Duration.ofSeconds(30),
                3,
                Duration.ofSeconds(5),
                Duration.ofMinutes(10),
                Duration.ofSeconds(5),
                Duration.ofSeconds(30),
                Duration.ofSeconds(1),
                200,
                8, // ZkCreateBenchmark: 4 in flight reached 0.4x raw multi-ops, 8 in flight ~1x
                Duration.ofSeconds(15));
    }

    /**
     * The grace period for a negotiated session timeout {@code t}: the configured one, else
     * {@code t/3 + logoutAllowance}. Each instance's grace adds the callback deadline it registered
     * (docs/architecture.md §4; {@code Reconciler}'s {@code graceOf}). A client stops granting and logs out by {@code 2t/3 + logout}
     * after its last ZooKeeper reply; the server removes its ephemeral node no earlier than {@code t}
     * after the last message it received from it; so at removal the client needs at most
     * {@code logout - t/3} more. The default grants {@code t/3 + logout}, i.e. a margin of {@code 2t/3}
     * for clock-rate differences and scheduling delays.
     */
    public Duration graceFor(Duration negotiatedSessionTimeout) {
        return grace != null ? grace : negotiatedSessionTimeout.dividedBy(3).plus(logoutAllowance);
    }

    public LeaderSettings withGrace(Duration value) {
        return edit(c -> c.grace = value);
    }

    public LeaderSettings withIntervals(Duration reconcile, Duration rescan, Duration batchPoll) {
        return edit(c -> {
            c.reconcileInterval = reconcile;
            c.rescanInterval = rescan;
            c.batchPollInterval = batchPoll;
        });
    }

    public LeaderSettings withFailurePolicy(Duration ack, int failures, Duration backoff, Duration cool) {
        return edit(c -> {
            c.ackTimeout = ack;
            c.maxFailures = failures;
            c.retryBackoff = backoff;
            c.cooldown = cool;
        });
    }

    public LeaderSettings withMultiOps(int opsPerMulti, int inFlight) {
        return edit(c -> {
            c.maxOpsPerMulti = opsPerMulti;
            c.maxInFlightMultis = inFlight;
        });
    }

    /** The same with another {@link #cooldown()} (server.yml {@code advice.cooldownMs}). */
    public LeaderSettings withCooldown(Duration value) {
        return edit(c -> c.cooldown = value);
    }

    public LeaderSettings withRebalanceDelay(Duration value) {
        return edit(c -> c.rebalanceDelay = value);
    }

    /** A copy with some fields changed; the canonical constructor validates the result. */
    private LeaderSettings edit(java.util.function.Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return new LeaderSettings(
                d.grace,
                d.logoutAllowance,
                d.rebalanceDelay,
                d.ackTimeout,
                d.maxFailures,
                d.retryBackoff,
                d.cooldown,
                d.reconcileInterval,
                d.rescanInterval,
                d.batchPollInterval,
                d.maxOpsPerMulti,
                d.maxInFlightMultis,
                d.zkTimeout);
    }

    /** The mutable form of one settings value, only inside {@link #edit}. */
    private static final class Draft {
        Duration grace;
        Duration logoutAllowance;
        Duration rebalanceDelay;
        Duration ackTimeout;
        int maxFailures;
        Duration retryBackoff;
        Duration cooldown;
        Duration reconcileInterval;
        Duration rescanInterval;
        Duration batchPollInterval;
        int maxOpsPerMulti;
        int maxInFlightMultis;
        Duration zkTimeout;

        Draft(LeaderSettings s) {
            grace = s.grace;
            logoutAllowance = s.logoutAllowance;
            rebalanceDelay = s.rebalanceDelay;
            ackTimeout = s.ackTimeout;
            maxFailures = s.maxFailures;
            retryBackoff = s.retryBackoff;
            cooldown = s.cooldown;
            reconcileInterval = s.reconcileInterval;
            rescanInterval = s.rescanInterval;
            batchPollInterval = s.batchPollInterval;
            maxOpsPerMulti = s.maxOpsPerMulti;
            maxInFlightMultis = s.maxInFlightMultis;
            zkTimeout = s.zkTimeout;
        }
    }
}
