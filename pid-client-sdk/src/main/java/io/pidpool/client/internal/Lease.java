package io.pidpool.client.internal;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The client's proof that its ZooKeeper session is alive: valid while {@code now < last contact +
 * 2T/3 − margin} and the session is still the one the lease was begun for (see {@link Timing} for
 * the arithmetic). "Last contact" is the send time of the latest request that got a successful reply
 * on that session.
 *
 * <p>Concurrency: thread-safe and lock-free. Replies are recorded from ZooKeeper's event thread, the
 * watchdog invalidates it, callers of {@code heldPids()} read it; every change is one
 * compare-and-set of an immutable snapshot, so readers always see a consistent (session, contact,
 * floor) triple.
 */
final class Lease {
    private record Snapshot(long sessionId, long budgetNanos, boolean hasContact, long lastContact, long floor) {}

    private static final Snapshot NONE = new Snapshot(0, 0, false, 0, 0);

    private final AtomicReference<Snapshot> state = new AtomicReference<>(NONE);

    /** Starts a lease for a new session; {@code contactSentAt} is when the request that proved it was sent. */
    void begin(long sessionId, Timing timing, long contactSentAt) {
        state.set(new Snapshot(sessionId, timing.leaseBudget(), true, contactSentAt, contactSentAt));
    }

    /** No session: the lease is invalid until the next {@link #begin}. */
    void end() {
        state.set(NONE);
    }

    /**
     * Records a successful reply on {@code sessionId} to a request sent at {@code sentAt}. Ignored if
     * it is for another session or was sent before the last {@link #invalidate}.
     *
     * @return whether the lease now reaches further than before
     */
    boolean recordReply(long sessionId, long sentAt) {
        while (true) {
            Snapshot s = state.get();
            if (s.sessionId == 0 || s.sessionId != sessionId || sentAt - s.floor < 0) {
                return false;
            }
            if (s.hasContact && sentAt - s.lastContact <= 0) {
                return false;
            }
            if (state.compareAndSet(s, new Snapshot(s.sessionId, s.budgetNanos, true, sentAt, s.floor))) {
                return true;
            }
        }
    }

    /**
     * Voids the lease (after a process pause): only replies to requests sent at or after {@code now}
     * can make it valid again.
     */
    void invalidate(long now) {
        while (true) {
            Snapshot s = state.get();
            if (s.sessionId == 0) {
                return;
            }
            if (state.compareAndSet(s, new Snapshot(s.sessionId, s.budgetNanos, false, s.lastContact, now))) {
                return;
            }
        }
    }

    /** Whether the lease holds at {@code now} for the session the ZooKeeper client is on right now. */
    boolean isValid(long now, long currentSessionId) {
        Snapshot s = state.get();
        return s.sessionId != 0
                && s.sessionId == currentSessionId
                && s.hasContact
                && now - s.lastContact < s.budgetNanos;
    }

    /** Nanoseconds of lease left at {@code now}; zero or negative when expired or absent. */
    long remaining(long now) {
        Snapshot s = state.get();
        return s.hasContact && s.sessionId != 0 ? s.lastContact + s.budgetNanos - now : 0;
    }

    long sessionId() {
        return state.get().sessionId;
    }
}
