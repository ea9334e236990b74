package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat and the lease together, on simulated time: the watchdog's two timers as {@link
 * DefaultPidClient} schedules them (the lease check every {@link Timing#tickInterval()}, {@link
 * Heartbeats#trySend} every {@link Heartbeats#period()}) and a ZooKeeper that answers every request
 * after a fixed round trip R, in order. No sleeps, no threads.
 */
class HeartbeatsTest {
    private static final long SESSION = 42;
    private static final Duration T = Duration.ofSeconds(5);
    private static final long STEP = Duration.ofMillis(1).toNanos();

    private final Timing timing = Timing.of(T);

    /** What one simulated run saw. */
    private record Run(
            int lapsedTicks, int firstLapseAtTick, int maxOutstanding, int replies, long sinceAnswerAtFirstLapse) {}

    /**
     * Runs for {@code length}; ZooKeeper answers with round trip {@code rtt} until {@code silentFrom}
     * (requests sent later are never answered).
     */
    private Run simulate(long rtt, long length, long silentFrom) {
        Lease lease = new Lease();
        Heartbeats heartbeats = new Heartbeats(timing);
        Deque<Long> inFlight = new ArrayDeque<>(); // send times; ZooKeeper answers in order
        long now = 0;
        lease.begin(SESSION, timing, now); // the registration's create, answered at once
        long nextTick = 0;
        long nextHeartbeat = 0;
        int ticks = 0;
        int lapsed = 0;
        int firstLapse = -1;
        int maxOutstanding = 0;
        int replies = 0;
        long sinceAnswerAtFirstLapse = -1;
        for (; now <= length; now += STEP) {
            while (!inFlight.isEmpty() && inFlight.peekFirst() + rtt <= now) {
                long sentAt = inFlight.removeFirst();
                heartbeats.answered(sentAt, now);
                lease.recordReply(SESSION, sentAt);
                replies++;
            }
            if (now >= nextHeartbeat) {
                nextHeartbeat = now + heartbeats.period();
                if (heartbeats.trySend(now, false) && now < silentFrom) {
                    inFlight.addLast(now);
                }
            }
            maxOutstanding = Math.max(maxOutstanding, heartbeats.outstanding());
            if (now >= nextTick) {
                nextTick = now + timing.tickInterval();
                ticks++;
                if (!lease.isValid(now, SESSION)) {
                    lapsed++;
                    if (firstLapse < 0) {
                        firstLapse = ticks;
                        sinceAnswerAtFirstLapse = heartbeats.sinceLastAnswer(now);
                    }
                }
            }
        }
        return new Run(lapsed, firstLapse, maxOutstanding, replies, sinceAnswerAtFirstLapse);
    }

    private long ofT(double fraction) {
        return (long) (T.toNanos() * fraction);
    }

    @Test
    void aSlowButSteadyZooKeeperKeepsTheLease() {
        // R = 0.35T: above T/6 (so several heartbeats must be in flight) and above half the budget
        // (0.283T, where one heartbeat at a time lets the lease lapse between replies)
        long rtt = ofT(0.35);
        Run run = simulate(rtt, ofT(20), Long.MAX_VALUE);

        assertThat(run.replies()).as("replies").isGreaterThan(20);
        assertThat(run.lapsedTicks())
                .as("watchdog ticks that found the lease expired (first at tick %d)", run.firstLapseAtTick())
                .isZero();
        assertThat(run.maxOutstanding()).isBetween(2, Heartbeats.MAX_OUTSTANDING);
    }

    @Test
    void theLeaseHoldsUpToABudgetMinusOneHeartbeatIntervalOfRoundTrip() {
        assertThat(simulate(ofT(0.39), ofT(20), Long.MAX_VALUE).lapsedTicks()).isZero();
        // beyond budget − T/6 = 0.4T the newest answered heartbeat is too old before the next reply
        Run tooSlow = simulate(ofT(0.42), ofT(20), Long.MAX_VALUE);
        assertThat(tooSlow.lapsedTicks()).isPositive();
        // what the log line reports: answers still arrive every T/6, for requests sent long ago
        assertThat(tooSlow.sinceAnswerAtFirstLapse()).isBetween(0L, timing.heartbeatInterval());
    }

    @Test
    void aSilentZooKeeperStillEndsTheLeaseWithinTheBudgetOfTheLastAnsweredRequest() {
        long rtt = ofT(0.35);
        long silentFrom = ofT(10);
        Run run = simulate(rtt, ofT(12), silentFrom);

        // the last answered heartbeat was sent just before silentFrom: the lease ends by then + budget,
        // and the watchdog sees it at its next tick
        long tickAtLapse = run.firstLapseAtTick();
        long lapseSeenAt = (tickAtLapse - 1) * timing.tickInterval();
        assertThat(lapseSeenAt).isGreaterThan(silentFrom);
        assertThat(lapseSeenAt).isLessThanOrEqualTo(silentFrom + timing.leaseBudget() + timing.tickInterval());
        // what the log line reports: nothing arrived since the last answer before the silence
        assertThat(run.sinceAnswerAtFirstLapse()).isGreaterThan(timing.leaseBudget() - rtt);
        // unanswered heartbeats do not pile up without bound
        assertThat(run.maxOutstanding()).isLessThanOrEqualTo(Heartbeats.MAX_OUTSTANDING);
    }

    @Test
    void outstandingHeartbeatsAreBoundedAndAStuckOneIsGivenUpAfterT() {
        Heartbeats heartbeats = new Heartbeats(timing);
        long every = timing.heartbeatInterval();
        long now = 0;
        int sent = 0;
        for (int i = 0; i < 12; i++, now += every) {
            if (heartbeats.trySend(now, false)) {
                sent++;
            }
        }
        // 12 intervals = 2T without any reply: the bound, plus one each time the oldest reached age T
        assertThat(heartbeats.outstanding()).isEqualTo(Heartbeats.MAX_OUTSTANDING);
        assertThat(heartbeats.oldestWait(now - every)).isLessThan(timing.sessionTimeoutNanos());
        assertThat(sent).isGreaterThan(Heartbeats.MAX_OUTSTANDING);
        // a reconnection forces one more even at the bound
        assertThat(heartbeats.trySend(now, true)).isTrue();
    }

    @Test
    void anAnswerOutOfOrderSettlesOnlyItsOwnHeartbeat() {
        Heartbeats heartbeats = new Heartbeats(timing);
        long every = timing.heartbeatInterval();
        assertThat(heartbeats.trySend(0, false)).isTrue();
        assertThat(heartbeats.trySend(every, false)).isTrue();
        assertThat(heartbeats.trySend(2 * every, false)).isTrue();

        heartbeats.settled(every);

        assertThat(heartbeats.outstanding()).isEqualTo(2);
        assertThat(heartbeats.oldestWait(3 * every)).isEqualTo(3 * every); // the first still waits
        heartbeats.settled(0);
        assertThat(heartbeats.oldestWait(3 * every)).isEqualTo(every);

        // and the lease keeps the newest send time whatever order the answers come in
        Lease lease = new Lease();
        lease.begin(SESSION, timing, 0);
        assertThat(lease.recordReply(SESSION, 2 * every)).isTrue();
        assertThat(lease.recordReply(SESSION, every)).isFalse();
        assertThat(lease.remaining(2 * every)).isEqualTo(timing.leaseBudget());
    }
}
