package io.pidpool.client.internal;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * When the client sends its heartbeat (a {@code checkExists} of its instance node) and which ones
 * are still waiting for a reply, for one registration. The watchdog asks {@link #trySend} every
 * {@link #period()} = {@link Timing#heartbeatInterval()} = T/6; ZooKeeper's event thread reports
 * each reply with {@link #answered} (or a failure with {@link #settled}).
 *
 * <p>A heartbeat goes out every T/6 whether or not earlier ones were answered, up to {@link
 * #MAX_OUTSTANDING} without a reply; one that got no reply within T is given up (its reply could no
 * longer renew the lease) so that it does not hold a place forever. Each reply renews the {@link
 * Lease} from its own send time and the lease keeps the newest, so several in flight never move it
 * backwards. Why this matters: with one at a time the next heartbeat leaves only after the previous
 * reply, and the lease lapses between replies once the round trip exceeds half the lease budget
 * (0.283T); with one every T/6 it lapses only once the round trip exceeds budget − T/6 (0.4T). The
 * bound keeps a stalled server from collecting an ever longer queue of them (at 0.4T of round trip
 * three are in flight; the fourth place absorbs jitter).
 *
 * <p>Concurrency: thread-safe; every method holds the monitor, which guards the outstanding send
 * times and the arrival time of the latest answer.
 */
final class Heartbeats {
    /** Heartbeats waiting for a reply at most (a forced one may exceed it). */
    static final int MAX_OUTSTANDING = 4;

    private final Timing timing;
    /** Send times of heartbeats without a reply, oldest first. */
    private final Deque<Long> outstanding = new ArrayDeque<>();

    private boolean anyAnswer;
    private long lastAnswerAt;

    Heartbeats(Timing timing) {
        this.timing = timing;
    }

    /** How often the watchdog asks {@link #trySend}: T/6. */
    long period() {
        return timing.heartbeatInterval();
    }

    /**
     * Whether to send a heartbeat at {@code now}; if so it counts as outstanding, sent at {@code now},
     * until {@link #settled}.
     *
     * @param force send even at the bound (after a reconnection or a process pause: the heartbeats
     *     outstanding were sent before it and cannot renew the lease, a fresh one can)
     */
    synchronized boolean trySend(long now, boolean force) {
        while (!outstanding.isEmpty() && now - outstanding.peekFirst() >= timing.sessionTimeoutNanos()) {
            outstanding.removeFirst(); // no reply within T: give it up
        }
        if (!force && outstanding.size() >= MAX_OUTSTANDING) {
            return false; // a stalled server must not collect an ever longer queue
        }
        outstanding.addLast(now);
        return true;
    }

    /** The heartbeat sent at {@code sentAt} failed or could not be sent. */
    synchronized void settled(long sentAt) {
        outstanding.removeFirstOccurrence(sentAt);
    }

    /** The heartbeat sent at {@code sentAt} was answered; the answer arrived at {@code arrivedAt}. */
    synchronized void answered(long sentAt, long arrivedAt) {
        outstanding.removeFirstOccurrence(sentAt);
        if (!anyAnswer || arrivedAt - lastAnswerAt > 0) {
            anyAnswer = true;
            lastAnswerAt = arrivedAt;
        }
    }

    /**
     * How long ago, at {@code now}, the latest answer arrived (whatever its send time); -1 if none
     * did. Small while the lease has lapsed: ZooKeeper is slow, not silent.
     */
    synchronized long sinceLastAnswer(long now) {
        return anyAnswer ? now - lastAnswerAt : -1;
    }

    /** Heartbeats sent and not yet answered. */
    synchronized int outstanding() {
        return outstanding.size();
    }

    /** How long the oldest outstanding heartbeat has waited at {@code now}; 0 if none. */
    synchronized long oldestWait(long now) {
        Long oldest = outstanding.peekFirst();
        return oldest == null ? 0 : now - oldest;
    }
}
