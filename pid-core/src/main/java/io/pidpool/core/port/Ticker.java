package io.pidpool.core.port;

/**
 * A monotonic clock in nanoseconds, for leases, timeouts and grace periods. Stored timestamps use
 * {@link java.time.Clock} instead. Injected everywhere so tests advance time instead of sleeping.
 */
@FunctionalInterface
public interface Ticker {
    /** Nanoseconds from an arbitrary origin; only differences mean anything. */
    long read();

    static Ticker system() {
        return System::nanoTime;
    }
}
