package io.pidpool.core.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A wall {@link Clock} that moves only when a test says so, including backwards. Thread-safe. */
public final class ManualClock extends Clock {
    private volatile Instant now;

    public ManualClock(Instant start) {
        this.now = start;
    }

    public static ManualClock at(String isoInstant) {
        return new ManualClock(Instant.parse(isoInstant));
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("ManualClock is UTC only");
    }

    @Override
    public Instant instant() {
        return now;
    }

    public synchronized ManualClock advance(Duration by) {
        now = now.plus(by);
        return this;
    }

    public synchronized ManualClock set(Instant instant) {
        now = instant;
        return this;
    }
}
