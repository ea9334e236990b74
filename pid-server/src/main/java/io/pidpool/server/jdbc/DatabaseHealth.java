package io.pidpool.server.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the database answers, known from a probe that runs all the time in the background
 * (docs/design.md §10, "Database outages"): every {@code interval} one {@code isValid} on a
 * connection of a pool of its own (one connection, so a busy main pool never looks like an outage).
 * A probe that fails, or has not answered {@code answerWithin} after it started, makes the state
 * {@link State#DOWN}; the next one that answers makes it {@link State#UP}. While DOWN, {@link
 * GatedDataSource} refuses connections at once, so callers (an operator's batch, {@code /health})
 * get {@code UNAVAILABLE} in microseconds instead of waiting for the pool's connection timeout.
 *
 * <p>Concurrency: one scheduler thread starts probes and judges the one in flight; probes run one at a
 * time on a thread of their own (a stalled one is never joined by a second); the state is one
 * atomic reference, read by any thread.
 */
public final class DatabaseHealth implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DatabaseHealth.class);

    public static final Duration DEFAULT_INTERVAL = Duration.ofMillis(250);
    public static final Duration DEFAULT_ANSWER_WITHIN = Duration.ofSeconds(1);

    public enum State {
        UP,
        DOWN
    }

    /** The state, since when (ticker nanos), and why (the last failure; empty when up). */
    public record Status(State state, long sinceNanos, String detail) {}

    private final DataSource probePool;
    private final String name;
    private final long answerWithinNanos;
    private final LongSupplier ticker;
    private final AtomicReference<Status> status;
    private final ScheduledExecutorService scheduler;
    private final ExecutorService prober;
    /** Scheduler thread only: the probe in flight and when it started. */
    private Future<?> inFlight;

    private long inFlightSince;

    DatabaseHealth(DataSource probePool, String name, Duration interval, Duration answerWithin) {
        this.probePool = probePool;
        this.name = name;
        this.answerWithinNanos = answerWithin.toNanos();
        this.ticker = System::nanoTime;
        this.status = new AtomicReference<>(new Status(State.UP, ticker.getAsLong(), ""));
        this.scheduler = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "pidpool-db-health"));
        this.prober = Executors.newSingleThreadExecutor(r -> daemon(r, "pidpool-db-probe"));
        scheduler.scheduleWithFixedDelay(this::tick, 0, interval.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    public Status status() {
        return status.get();
    }

    public boolean isDown() {
        return status.get().state() == State.DOWN;
    }

    private void tick() {
        try {
            long now = ticker.getAsLong();
            if (inFlight != null && !inFlight.isDone()) {
                if (now - inFlightSince > answerWithinNanos) {
                    down("no answer within " + TimeUnit.NANOSECONDS.toMillis(answerWithinNanos) + " ms");
                }
                return; // never a second probe beside a stalled one
            }
            inFlightSince = now;
            inFlight = prober.submit(this::probe);
        } catch (RuntimeException e) {
            log.warn("database health tick failed", e);
        }
    }

    private void probe() {
        try (Connection c = probePool.getConnection()) {
            if (c.isValid((int) Math.max(1, TimeUnit.NANOSECONDS.toSeconds(answerWithinNanos)))) {
                up();
            } else {
                down("connection not valid");
            }
        } catch (SQLException | RuntimeException e) {
            down(e.getClass().getSimpleName() + ": " + e.getMessage());
        }
    }

    private void up() {
        Status was = status.get();
        if (was.state() == State.UP) {
            return;
        }
        Status now = new Status(State.UP, ticker.getAsLong(), "");
        if (status.compareAndSet(was, now)) {
            log.info(
                    "database {} answers again after {} ms down",
                    name,
                    TimeUnit.NANOSECONDS.toMillis(now.sinceNanos() - was.sinceNanos()));
        }
    }

    private void down(String why) {
        Status was = status.get();
        if (was.state() == State.DOWN) {
            return;
        }
        if (status.compareAndSet(was, new Status(State.DOWN, ticker.getAsLong(), why))) {
            log.warn("database {} is down ({}): callers get UNAVAILABLE at once until it answers", name, why);
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        prober.shutdownNow();
        if (probePool instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                log.debug("closing the probe pool failed", e);
            }
        }
    }

    /** How long it has been in its state, in ms. */
    long millisInState() {
        return TimeUnit.NANOSECONDS.toMillis(ticker.getAsLong() - status.get().sinceNanos());
    }
}
