package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.testing.ManualTicker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The lease and pause arithmetic of {@link Timing}, driven by a manual ticker: no sleeps. */
class LeaseTest {
    private static final long S = 42;
    private static final Duration T = Duration.ofSeconds(6);
    private final Timing timing = Timing.of(T);
    private final ManualTicker ticker = new ManualTicker();
    private final Lease lease = new Lease();

    @Test
    void timingFollowsTheRule() {
        assertThat(Duration.ofNanos(timing.leaseBudget())).isEqualTo(Duration.ofMillis(4000 - 600)); // 2T/3 - T/10
        assertThat(Duration.ofNanos(timing.heartbeatInterval())).isEqualTo(Duration.ofSeconds(1)); // T/6
        assertThat(Duration.ofNanos(timing.tickInterval())).isEqualTo(Duration.ofMillis(300)); // T/20
        assertThat(Duration.ofNanos(timing.stallThreshold())).isEqualTo(Duration.ofSeconds(2)); // T/3
        // several heartbeats fit into one lease, so a single slow reply does not revoke
        assertThat(timing.leaseBudget() / timing.heartbeatInterval()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void validUntilTwoThirdsOfTMinusMarginAfterTheLastRequestWasSent() {
        lease.begin(S, timing, ticker.read());

        ticker.advance(Duration.ofMillis(3399));
        assertThat(lease.isValid(ticker.read(), S)).isTrue();
        ticker.advance(Duration.ofMillis(1));
        assertThat(lease.isValid(ticker.read(), S)).isFalse();
    }

    @Test
    void aReplyExtendsTheLeaseFromItsRequestsSendTimeNotItsArrival() {
        lease.begin(S, timing, ticker.read());
        long sent = ticker.advance(Duration.ofSeconds(1)).read();
        ticker.advance(Duration.ofSeconds(2)); // the reply takes 2 s to arrive

        assertThat(lease.recordReply(S, sent)).isTrue();

        assertThat(lease.remaining(ticker.read()))
                .isEqualTo(Duration.ofMillis(3400 - 2000).toNanos());
        ticker.advance(Duration.ofMillis(1400));
        assertThat(lease.isValid(ticker.read(), S)).isFalse();
    }

    @Test
    void anOlderReplyNeverShortensTheLease() {
        long early = ticker.read();
        lease.begin(S, timing, early);
        long late = ticker.advance(Duration.ofSeconds(2)).read();
        assertThat(lease.recordReply(S, late)).isTrue();
        assertThat(lease.recordReply(S, early)).isFalse();
        assertThat(lease.remaining(ticker.read())).isEqualTo(timing.leaseBudget());
    }

    @Test
    void theLeaseBelongsToOneSession() {
        lease.begin(S, timing, ticker.read());
        assertThat(lease.isValid(ticker.read(), S + 1)).isFalse(); // the client moved to another session
        assertThat(lease.recordReply(S + 1, ticker.read())).isFalse();
        assertThat(lease.isValid(ticker.read(), 0)).isFalse(); // no session at all

        lease.end();
        assertThat(lease.isValid(ticker.read(), S)).isFalse();
        assertThat(lease.recordReply(S, ticker.read())).isFalse();
    }

    @Test
    void afterAPauseOnlyRepliesToRequestsSentAfterwardsCount() {
        lease.begin(S, timing, ticker.read());
        long sentBeforePause = ticker.advance(Duration.ofMillis(100)).read();
        long afterPause = ticker.advance(Duration.ofSeconds(1)).read();

        lease.invalidate(afterPause);
        assertThat(lease.isValid(afterPause, S)).isFalse();
        // the reply to the request sent before the pause arrives now: it proves nothing about the pause
        assertThat(lease.recordReply(S, sentBeforePause)).isFalse();
        assertThat(lease.isValid(afterPause, S)).isFalse();

        long fresh = ticker.advance(Duration.ofMillis(10)).read();
        assertThat(lease.recordReply(S, fresh)).isTrue();
        assertThat(lease.isValid(ticker.read(), S)).isTrue();
    }

    @Test
    void pauseDetectorFlagsOnlyGapsAboveT3() {
        PauseDetector detector = new PauseDetector(timing.stallThreshold(), ticker.read());

        for (int i = 0; i < 10; i++) {
            assertThat(detector.tick(ticker.advance(Duration.ofNanos(timing.tickInterval()))
                            .read()))
                    .isZero();
        }
        assertThat(detector.tick(ticker.advance(Duration.ofSeconds(2)).read())).isZero(); // exactly T/3: fine
        long stall = detector.tick(ticker.advance(Duration.ofMillis(2001)).read());
        assertThat(Duration.ofNanos(stall)).isEqualTo(Duration.ofMillis(2001));
        assertThat(detector.tick(ticker.advance(Duration.ofMillis(300)).read())).isZero(); // back to normal
    }

    @Test
    void revocationAfterTheLastContactEndsWellBeforeTheLeaderMayMoveThePid() {
        // the promise of Timing's class comment, checked in numbers for several T
        for (long ms : new long[] {500, 2000, 4000, 5000, 30_000}) {
            Timing t = Timing.ofMillis(ms);
            long logout = Duration.ofMillis(300).toNanos();
            long lastRequestSent = 0; // c >= q: the server heard from us at the earliest then
            long revokedBy = lastRequestSent + t.leaseBudget() + t.tickInterval() + logout;
            long worstPause = t.stallThreshold(); // a pause up to T/3 may delay the check once
            long earliestForeignLogin =
                    lastRequestSent + t.sessionTimeoutNanos() + t.sessionTimeoutNanos() / 3 + logout;
            assertThat(revokedBy + worstPause).as("T=%d ms", ms).isLessThan(earliestForeignLogin);
        }
    }
}
