package io.pidpool.client.internal;

import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.KeeperException.Code;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's watchdog: every T/20 it measures pauses ({@link PauseDetector}) and checks the
 * {@link Lease}; every T/6 it sends a heartbeat (an existence check of the instance node, several may
 * be in flight, see {@link Heartbeats}) whose answer renews the lease. A pause or an expired lease
 * closes the client's gate at once and posts a suspension to the state thread; an instance node that
 * vanished or belongs to another session ends the registration.
 *
 * <p>Concurrency: the ticks and heartbeats run on one timer thread (the watchdog thread), which owns
 * the pause detector; {@link #schedule} runs on the state thread; answers arrive on the
 * coordination's event thread. Everything else goes through the {@link Host}.
 */
final class Watchdog {
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

    /** Port: runs a task now and then every {@code periodNanos} on the watchdog thread until cancelled. */
    interface Timers {
        /** @return cancels the task */
        Runnable every(String what, long periodNanos, Runnable task);
    }

    /** Port: the heartbeat's coordination call. */
    interface Probe {
        /** An existence check of {@code path}; the answer carries the node's ephemeral owner. */
        void exists(String path, PidNodes.Answer<Long> owner) throws Exception;
    }

    /** The registration the watchdog guards. */
    record Watched(long generation, long sessionId, String instancePath, Heartbeats heartbeats) {}

    /** What the watchdog asks of its client (any thread unless said). */
    interface Host {
        /** The timing of the current registration, {@code null} while there is none. */
        Timing timing();

        Watched current();

        /** Whether the client is started and not closing. */
        boolean running();

        /** Whether the client's gate is open. */
        boolean granting();

        /** Closes the gate at once. */
        void stop();

        /** The session the coordination client is on now (0 if none). */
        long liveSession();

        /** Posts a suspension (revoke everything, the session may still be fine) to the state thread. */
        void suspend(String why);

        /** Posts to the state thread: the registration's instance node is gone or foreign. */
        void instanceNodeLost(long generation, String why);

        /** A successful reply on {@code sessionId} to a request sent at {@code sentAt}. */
        void onReply(long sessionId, long sentAt);

        /** The client's ticker, in nanoseconds. */
        long now();
    }

    private final Host host;
    private final Lease lease;
    private final Timers timers;
    private final Probe probe;
    // state thread
    private Runnable cancelTick;
    private long tickPeriod;
    private Runnable cancelHeartbeat;
    private long heartbeatPeriod;
    // watchdog thread
    private PauseDetector detector;
    private Timing detectorTiming;

    Watchdog(Host host, Lease lease, Timers timers, Probe probe) {
        this.host = host;
        this.lease = lease;
        this.timers = timers;
        this.probe = probe;
    }

    /** State thread: (re)starts the tick and the heartbeat for a registration with this timing. */
    void schedule(Timing timing, Heartbeats heartbeats) {
        long period = timing.tickInterval();
        if (cancelTick == null || tickPeriod != period) {
            if (cancelTick != null) {
                cancelTick.run();
            }
            tickPeriod = period;
            cancelTick = timers.every("watchdog", period, this::tick);
        }
        long every = heartbeats.period();
        if (cancelHeartbeat == null || heartbeatPeriod != every) {
            if (cancelHeartbeat != null) {
                cancelHeartbeat.run();
            }
            heartbeatPeriod = every;
            cancelHeartbeat = timers.every("heartbeat", every, () -> heartbeat(host.now(), false));
        }
    }

    /** Watchdog thread: pause detection and lease check. */
    void tick() {
        Timing t = host.timing();
        if (t == null || !host.running()) {
            return;
        }
        long now = host.now();
        if (detector == null || detectorTiming != t) {
            detector = new PauseDetector(t.stallThreshold(), now);
            detectorTiming = t;
        }
        long stall = detector.tick(now);
        if (stall > 0) {
            lease.invalidate(now);
            host.stop();
            // only requests sent from now on can renew the lease: prove it again at once rather than
            // at the next heartbeat (at most one extra per stall, and stalls are over T/3 apart)
            heartbeat(now, true);
            host.suspend(String.format(
                    "the process did not run for %d ms (budget %d ms)", millis(stall), millis(t.stallThreshold())));
        } else if (host.granting() && !lease.isValid(now, host.liveSession())) {
            host.stop();
            host.suspend(String.format(
                    "the lease expired (no ZooKeeper reply within %d ms; the newest reply answered a request"
                            + " sent %d ms ago%s)",
                    millis(t.leaseBudget()), millis(t.leaseBudget() - lease.remaining(now)), waiting(now)));
        }
    }

    /**
     * How old the newest answered request is, when the last heartbeat answer arrived and how many wait
     * since when: tells a slow ZooKeeper (answers keep arriving, the last one less than a round trip
     * ago, but for requests sent long ago) from a silent one (the last answer arrived about as long ago
     * as its request was sent) in a CI log.
     */
    private String waiting(long now) {
        Watched s = host.current();
        if (s == null) {
            return "";
        }
        long sinceAnswer = s.heartbeats().sinceLastAnswer(now);
        return (sinceAnswer < 0
                        ? "; no heartbeat answered yet"
                        : String.format("; the last heartbeat answer arrived %d ms ago", millis(sinceAnswer)))
                + String.format(
                        "; %d heartbeats unanswered, the oldest sent %d ms ago",
                        s.heartbeats().outstanding(), millis(s.heartbeats().oldestWait(now)));
    }

    /** Watchdog thread: an existence check of the instance node when {@link Heartbeats} says so. */
    void heartbeat(long now, boolean force) {
        Watched s = host.current();
        if (s == null || !host.running() || !s.heartbeats().trySend(now, force)) {
            return;
        }
        try {
            probe.exists(s.instancePath(), (code, owner) -> onHeartbeat(s, now, code, owner));
        } catch (Exception e) {
            s.heartbeats().settled(now);
            log.debug("Heartbeat not sent: {}", e.toString());
        }
    }

    /** Coordination event thread. */
    private void onHeartbeat(Watched s, long sentAt, Code code, Long owner) {
        if (code == Code.OK || code == Code.NONODE) {
            s.heartbeats().answered(sentAt, host.now());
        } else {
            s.heartbeats().settled(sentAt);
        }
        if (code == Code.OK && owner != null) {
            if (owner == s.sessionId()) {
                host.onReply(s.sessionId(), sentAt);
            } else {
                host.instanceNodeLost(s.generation(), "belongs to another session");
            }
        } else if (code == Code.NONODE) {
            host.instanceNodeLost(s.generation(), "vanished");
        }
    }

    private static long millis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }
}
