package io.pidpool.client.internal.quota;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether Redis is known to be away, so that callers fail in microseconds instead of each waiting its
 * deadline (docs/design.md §9, "Redis outages").
 *
 * <p><b>States.</b> {@link State#CLOSED}: calls go to Redis. A call that Redis did not answer (in
 * time) opens it: {@link State#OPEN}, callers get {@code UNAVAILABLE} at once from {@link
 * #openError()}, and a background probe asks Redis every {@code probeInterval} (one cheap read, given
 * up after {@code probeTimeout}, never more than one on the wire). The first answer closes it, and so
 * does any call that got through meanwhile (a late reply, the batcher's). The two transitions are the
 * only ones, each a compare-and-set, so each is logged once.
 *
 * <p><b>Concurrency.</b> Thread-safe. The probe runs on the issuer's scheduler; its future completes
 * on a Redisson thread, which only flips the state or schedules the next probe.
 */
final class RedisCircuit {
    private static final Logger log = LoggerFactory.getLogger(RedisCircuit.class);

    enum State {
        CLOSED,
        OPEN;

        /** The only transitions: a failure opens, an answer closes. */
        boolean canBecome(State next) {
            return this != next;
        }
    }

    private final Supplier<CompletableFuture<Void>> probe;
    private final ScheduledExecutorService scheduler;
    private final Ticker ticker;
    private final long probeIntervalNanos;
    private final String name;
    private final AtomicReference<State> state = new AtomicReference<>(State.CLOSED);
    private volatile long openedAtNanos;
    /** When the circuit last closed; the construction time before any outage. */
    private volatile long closedAtNanos;

    private volatile String lastFailure = "";

    RedisCircuit(
            String name,
            Supplier<CompletableFuture<Void>> probe,
            ScheduledExecutorService scheduler,
            Ticker ticker,
            Duration probeInterval) {
        this.name = name;
        this.probe = probe;
        this.scheduler = scheduler;
        this.ticker = ticker;
        this.probeIntervalNanos = probeInterval.toNanos();
        this.closedAtNanos = ticker.read();
    }

    State state() {
        return state.get();
    }

    boolean isOpen() {
        return state.get() == State.OPEN;
    }

    /** When the circuit last closed (ticker nanos): voids of uncertain deductions count from here. */
    long closedAtNanos() {
        return closedAtNanos;
    }

    /** Redis did not answer a call (in time): open, and start probing. */
    void failed(Throwable why) {
        lastFailure = why == null ? "" : String.valueOf(why.getMessage());
        if (!transition(State.CLOSED, State.OPEN)) {
            return;
        }
        openedAtNanos = ticker.read();
        log.warn(
                "Redis did not answer {} ({}): permits fail at once until a probe gets an answer (every {} ms)",
                name,
                lastFailure,
                TimeUnit.NANOSECONDS.toMillis(probeIntervalNanos));
        schedule(0);
    }

    /** Redis answered a call: close. */
    void succeeded() {
        if (state.get() == State.CLOSED || !transition(State.OPEN, State.CLOSED)) {
            return;
        }
        closedAtNanos = ticker.read();
        log.info(
                "Redis answers {} again after {} ms: permits resume",
                name,
                TimeUnit.NANOSECONDS.toMillis(closedAtNanos - openedAtNanos));
    }

    private boolean transition(State from, State to) {
        return from.canBecome(to) && state.compareAndSet(from, to);
    }

    /** What an acquire gets while the circuit is open. */
    PidPoolException openError() {
        return openError("no permit granted, nothing deducted; retry later");
    }

    /** What a caller gets while the circuit is open; {@code consequence} says what did not happen. */
    PidPoolException openError(String consequence) {
        long ms = TimeUnit.NANOSECONDS.toMillis(ticker.read() - openedAtNanos);
        return PidPoolException.unavailable(
                "Redis has not answered " + name + " for " + ms + " ms (" + lastFailure + "): " + consequence, null);
    }

    private void schedule(long delayNanos) {
        try {
            scheduler.schedule(this::probeOnce, delayNanos, TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the issuer is closing: no more probes
        }
    }

    private void probeOnce() {
        if (state.get() != State.OPEN) {
            return;
        }
        CompletableFuture<Void> answer;
        try {
            answer = probe.get();
        } catch (RuntimeException e) {
            schedule(probeIntervalNanos);
            return;
        }
        long sent = ticker.read();
        answer.whenComplete((ok, error) -> {
            if (error == null) {
                succeeded();
            } else {
                // one probe on the wire at a time; the next one no sooner than an interval after this one was sent
                schedule(Math.max(0, probeIntervalNanos - (ticker.read() - sent)));
            }
        });
    }
}
