package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The newest {@link UsageReport} seen, and whether it is still fresh. A report taken earlier than the
 * one held (a slow scan finishing after a faster, later one) is ignored, so readers never go back in
 * time.
 *
 * <p>Concurrency: lock-free; any thread may publish and read.
 */
public final class LatestReport {
    private final Clock clock;
    private final AtomicReference<UsageReport> latest = new AtomicReference<>();

    public LatestReport(Clock clock) {
        this.clock = requireNonNull(clock, "clock");
    }

    /** Keeps {@code report} if it is newer than the one held; returns whether it was kept. */
    public boolean publish(UsageReport report) {
        requireNonNull(report, "report");
        UsageReport before;
        do {
            before = latest.get();
            if (before != null && report.at().isBefore(before.at())) {
                return false;
            }
        } while (!latest.compareAndSet(before, report));
        return true;
    }

    /** The newest report, however old. */
    public Optional<UsageReport> latest() {
        return Optional.ofNullable(latest.get());
    }

    /** The newest report if it was taken at most {@code maxAge} ago (by this clock). */
    public Optional<UsageReport> fresh(Duration maxAge) {
        requireNonNull(maxAge, "maxAge");
        requireArgument(!maxAge.isNegative(), "maxAge", "must not be negative, was %s", maxAge);
        UsageReport report = latest.get();
        if (report == null) {
            return Optional.empty();
        }
        return age(report).compareTo(maxAge) <= 0 ? Optional.of(report) : Optional.empty();
    }

    /** How long ago {@code report} was taken; zero if its time lies ahead of this clock. */
    public Duration age(UsageReport report) {
        Duration age = Duration.between(report.at(), clock.instant());
        return age.isNegative() ? Duration.ZERO : age;
    }
}
