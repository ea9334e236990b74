package io.pidpool.core.singleflight;

import static io.pidpool.core.error.Preconditions.requireArgument;
import static io.pidpool.core.error.Preconditions.requireNonNull;
import static io.pidpool.core.error.Preconditions.requireState;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs single-flights over the ports {@link FlightLocks} and {@link FlightResults}: per key, the
 * callers of this process share one flight (only one of them competes in the cluster), and per key
 * in the cluster one holder runs the work while the others wait for its result.
 *
 * <p><b>A flight</b> ({@link FlightState}): COMPETING reads the result node; a live SUCCESS is the
 * answer. Otherwise it tries the lock. The winner re-reads (a holder may have published and let go
 * between the read and the lock), claims the result node, runs the work, publishes the outcome and
 * only then releases the lock. The others wait until the lock node is gone, then compete again: the
 * result is there (DONE), or the holder died without one and one of them takes over.
 *
 * <p><b>Failures of the work</b> are published as a FAILURE record and end the round for everybody
 * who waited for it ({@link FlightFailedException}); a caller arriving after that round ignores the
 * FAILURE record and competes afresh. So a failing work runs once per round, not once per waiter
 * (a thundering herd of retries), and a transient failure does not stick for the retention.
 *
 * <p><b>Fencing</b>: a holder whose claim or publish is refused (a newer holder took over, e.g.
 * after its session expired) discards its outcome and competes again, which normally finds the newer
 * holder's result.
 *
 * <p><b>Deadline</b>: a flight that is not the holder gives up after {@code maxWait} with {@code
 * UNAVAILABLE}; the holder's own work is not bounded here (its callers wait for it).
 *
 * <p>Concurrency: thread-safe. A flight's steps run one after the other on the {@code executor}
 * (the work too); the flight's state is touched only by its current step. Port calls may block for a
 * round trip. {@code flights} maps each key to the flight in progress.
 */
public final class SingleFlightEngine {
    private static final Logger log = LoggerFactory.getLogger(SingleFlightEngine.class);

    private final FlightLocks locks;
    private final FlightResults results;
    private final Clock clock;
    private final Ticker ticker;
    private final Executor executor;
    private final Duration maxWait;
    private final ConcurrentMap<String, CompletableFuture<byte[]>> flights = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicInteger waiting = new java.util.concurrent.atomic.AtomicInteger();
    private volatile Consumer<FlightState> transitions = s -> {};

    /**
     * @param clock stamps the expiry of stored results (wall time, compared across processes)
     * @param ticker measures {@code maxWait}
     * @param executor runs the flights' steps and the work
     */
    public SingleFlightEngine(
            FlightLocks locks, FlightResults results, Clock clock, Ticker ticker, Executor executor, Duration maxWait) {
        this.locks = requireNonNull(locks, "locks");
        this.results = requireNonNull(results, "results");
        this.clock = requireNonNull(clock, "clock");
        this.ticker = requireNonNull(ticker, "ticker");
        this.executor = requireNonNull(executor, "executor");
        this.maxWait = requirePositive(maxWait, "maxWait");
    }

    /**
     * The outcome of {@code work} for {@code key}, run once in the cluster per round. The future
     * completes with a copy of the result bytes, or exceptionally with {@link FlightFailedException}
     * (the round's work threw) or {@link PidPoolException} ({@code UNAVAILABLE}: no answer within
     * {@code maxWait}, or ZooKeeper unreachable). A caller that finds a flight of {@code key} in
     * progress in this process joins it; its own {@code work} and {@code retention} are then unused.
     *
     * @param retention how long a SUCCESS stays readable for later callers (at least 1 ms)
     * @throws PidPoolException {@code INVALID_ARGUMENT} at once for a bad key, retention or work
     */
    public CompletableFuture<byte[]> fly(String key, Duration retention, Callable<byte[]> work) {
        FlightKeys.requireKey(key);
        requirePositive(retention, "retention");
        requireNonNull(work, "work");
        Flight[] created = new Flight[1];
        // a finished flight may still be mapped (its removal runs after its callers are woken): replace it
        CompletableFuture<byte[]> shared = flights.compute(key, (k, existing) -> {
            if (existing != null && !existing.isDone()) {
                return existing;
            }
            created[0] = new Flight(k, retention, work);
            return created[0].done;
        });
        if (created[0] != null) {
            shared.whenComplete((r, e) -> flights.remove(key, shared));
            created[0].start();
        }
        return shared.thenApply(byte[]::clone);
    }

    /** Keys with a flight in progress in this process. */
    public int inFlight() {
        return flights.size();
    }

    /** Flights of this process waiting for another participant's result now. */
    public int waiting() {
        return waiting.get();
    }

    /** Test hook: every state change of every flight is reported here, on the flight's thread. */
    public void onTransition(Consumer<FlightState> listener) {
        this.transitions = requireNonNull(listener, "listener");
    }

    private static Duration requirePositive(Duration d, String field) {
        requireArgument(
                d != null && !d.isNegative() && d.toMillis() >= 1, field, "%s must be at least 1 ms, was %s", field, d);
        return d;
    }

    /** One key's flight in this process. Touched by one step at a time. */
    private final class Flight {
        final String key;
        final Duration retention;
        final Callable<byte[]> work;
        final long deadline;
        final CompletableFuture<byte[]> done = new CompletableFuture<>();
        FlightState state = FlightState.IDLE;
        long waitedRound = Long.MIN_VALUE;

        Flight(String key, Duration retention, Callable<byte[]> work) {
            this.key = key;
            this.retention = retention;
            this.work = work;
            this.deadline = ticker.read() + maxWait.toNanos();
        }

        void start() {
            step(this::compete);
        }

        void step(Runnable body) {
            try {
                executor.execute(() -> guarded(body));
            } catch (RuntimeException rejected) {
                fail(PidPoolException.unavailable("single-flight '" + key + "': executor refused the step", rejected));
            }
        }

        void guarded(Runnable body) {
            try {
                body.run();
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        void move(FlightState next) {
            requireState(next.canFollow(state), "single-flight '%s': %s may not follow %s", key, next, state);
            if (state == FlightState.WAITING) {
                waiting.decrementAndGet();
            } else if (next == FlightState.WAITING) {
                waiting.incrementAndGet();
            }
            state = next;
            transitions.accept(next);
        }

        void compete() {
            move(FlightState.COMPETING);
            Optional<FlightRecord> found = results.read(key);
            if (found.isPresent() && answer(found.get())) {
                return;
            }
            if (ticker.read() - deadline >= 0) {
                fail(PidPoolException.unavailable(
                        "single-flight '" + key + "': no result within " + maxWait + " (maxWait)", null));
                return;
            }
            FlightLease.Acquisition acquisition = locks.tryAcquire(key);
            if (acquisition instanceof FlightLease.Acquired a) {
                run(a.lease());
            } else {
                await(((FlightLease.Held) acquisition).round());
            }
        }

        /** Ends the flight with {@code record} if it answers this flight; false if it does not. */
        boolean answer(FlightRecord record) {
            boolean live = !record.expiredAt(clock.millis());
            if (live && record.kind() == FlightRecord.Kind.SUCCESS) {
                move(FlightState.DONE);
                done.complete(record.value());
                return true;
            }
            if (live && record.kind() == FlightRecord.Kind.FAILURE && record.round() == waitedRound) {
                failWith(record, null);
                return true;
            }
            return false;
        }

        void run(FlightLease lease) {
            move(FlightState.RUNNING);
            boolean released = false;
            try {
                Optional<FlightRecord> found = results.read(key);
                if (found.isPresent() && answer(found.get())) {
                    return;
                }
                long expires = clock.millis() + retention.toMillis();
                Optional<FlightClaim> claim = results.claim(lease, FlightRecord.pending(lease.round(), expires));
                if (claim.isEmpty()) {
                    log.info("single-flight '{}': lost the lock of round {} before running", key, lease.round());
                    release(lease);
                    released = true;
                    step(this::compete);
                    return;
                }
                Throwable thrown = null;
                FlightRecord outcome;
                try {
                    byte[] value = work.call();
                    outcome = outcomeOf(lease.round(), value);
                } catch (Exception | Error e) {
                    if (e instanceof InterruptedException) {
                        Thread.currentThread().interrupt();
                    }
                    thrown = e;
                    outcome = failureRecord(lease.round(), e.getClass().getName(), e.getMessage());
                }
                boolean published;
                try {
                    published = results.publish(claim.get(), outcome);
                } catch (PidPoolException e) {
                    if (e.code() != ErrorCode.UNAVAILABLE) {
                        throw e;
                    }
                    // unknown outcome: look at what the cluster has once this round is over
                    log.warn("single-flight '{}': publishing round {} failed: {}", key, lease.round(), e.getMessage());
                    published = false;
                }
                release(lease);
                released = true;
                if (!published) {
                    log.info(
                            "single-flight '{}': the result of round {} was refused; looking again",
                            key,
                            lease.round());
                    step(this::compete);
                } else if (outcome.kind() == FlightRecord.Kind.SUCCESS) {
                    move(FlightState.DONE);
                    done.complete(outcome.value());
                } else {
                    failWith(outcome, thrown);
                }
            } finally {
                if (!released) {
                    release(lease);
                }
            }
        }

        FlightRecord outcomeOf(long round, byte[] value) {
            if (value == null) {
                return failureRecord(round, NullPointerException.class.getName(), "the work returned null");
            }
            if (value.length > FlightRecord.MAX_VALUE_BYTES) {
                return failureRecord(
                        round,
                        PidPoolException.class.getName(),
                        "the result has " + value.length + " bytes, more than the limit of "
                                + FlightRecord.MAX_VALUE_BYTES);
            }
            return FlightRecord.success(round, clock.millis() + retention.toMillis(), value);
        }

        FlightRecord failureRecord(long round, String type, String message) {
            return FlightRecord.failure(round, clock.millis() + retention.toMillis(), type, message);
        }

        void release(FlightLease lease) {
            try {
                locks.release(lease);
            } catch (RuntimeException e) {
                log.debug("single-flight '{}': releasing round {} failed: {}", key, lease.round(), e.toString());
            }
        }

        void await(long round) {
            move(FlightState.WAITING);
            waitedRound = round;
            long left = Math.max(1, deadline - ticker.read());
            locks.released(key, round, Duration.ofNanos(left)).whenComplete((v, e) -> step(this::compete));
        }

        void failWith(FlightRecord record, Throwable cause) {
            move(FlightState.FAILED);
            done.completeExceptionally(
                    new FlightFailedException(key, record.errorType(), record.errorMessage(), cause));
        }

        void fail(Throwable e) {
            if (done.isDone()) {
                log.warn("single-flight '{}': error after the flight ended", key, e);
                return;
            }
            move(FlightState.FAILED);
            done.completeExceptionally(e);
        }
    }
}
