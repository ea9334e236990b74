package io.pidpool.client.internal;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * When the client sends its heartbeat (a {@code checkExists} of its instance node) and which ones
 * are still waiting for a reply, for one registration. The watchdog asks {@link #trySend} every
 * {@link #period()}; ZooKeeper's event thread reports each reply with {@link #settled}.
 *
 * <p>One heartbeat at a time, every {@link Timing#heartbeatInterval()}; one that got no reply within
 * T is given up so that the next can go.
 *
 * <p>Concurrency: thread-safe; every method holds the monitor, which guards the outstanding send
 * times and the time of the last send.
 */
final class Heartbeats {
    /** Heartbeats waiting for a reply at most (a forced one may exceed it). */
    static final int MAX_OUTSTANDING = 1;

    private final Timing timing;
    /** Send times of heartbeats without a reply, oldest first. */
    private final Deque<Long> outstanding = new ArrayDeque<>();

    private boolean sentAny;
    private long lastSentAt;

    Heartbeats(Timing timing) {
        this.timing = timing;
    }

    /** How often the watchdog asks {@link #trySend}. */
    long period() {
        return timing.tickInterval();
    }

    /**
     * Whether to send a heartbeat at {@code now}; if so it counts as outstanding, sent at {@code now},
     * until {@link #settled}.
     *
     * @param force send now even if the last one was sent less than the interval ago (after a
     *     reconnection)
     */
    synchronized boolean trySend(long now, boolean force) {
        if (!force && sentAny && now - lastSentAt < timing.heartbeatInterval()) {
            return false;
        }
        if (outstanding.size() >= MAX_OUTSTANDING && now - outstanding.peekFirst() < timing.sessionTimeoutNanos()) {
            return false; // one at a time: a stuck one must not pile up more
        }
        outstanding.clear();
        outstanding.addLast(now);
        sentAny = true;
        lastSentAt = now;
        return true;
    }

    /** The heartbeat sent at {@code sentAt} was answered, failed or could not be sent. */
    synchronized void settled(long sentAt) {
        outstanding.removeFirstOccurrence(sentAt);
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
