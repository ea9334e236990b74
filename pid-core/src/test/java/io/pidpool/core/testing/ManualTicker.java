package io.pidpool.core.testing;

import io.pidpool.core.port.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A {@link Ticker} that moves only when a test says so. Thread-safe. */
public final class ManualTicker implements Ticker {
    private final AtomicLong nanos = new AtomicLong();

    @Override
    public long read() {
        return nanos.get();
    }

    public ManualTicker advance(Duration by) {
        nanos.addAndGet(by.toNanos());
        return this;
    }
}
