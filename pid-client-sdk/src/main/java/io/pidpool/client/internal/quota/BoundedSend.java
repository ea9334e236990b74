package io.pidpool.client.internal.quota;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.Ticker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * One call to Redis on a caller's thread, bounded by what is left of the caller's deadline: Redisson
 * gives each send up by itself at that bound (no retry of its own, nothing lingers in its queues),
 * and a send that failed early is repeated once if time is left, which is safe because every quota
 * script is idempotent by its ids. Any answer, also a late one, closes the {@link RedisCircuit}.
 *
 * <p>The caller decides what a missing answer means (a deduction becomes uncertain, a refund's
 * outcome is unknown) and opens the circuit.
 */
final class BoundedSend {
    /** Below this much time left nothing is sent (it could not be answered in time). */
    static final long MIN_SEND_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /**
     * What came of it: the answer, or the failure and the last send ({@code null} when no time was
     * left to send anything at all).
     */
    record Outcome<T>(T answer, PidPoolException failure, CompletableFuture<T> lastSend) {
        boolean answered() {
            return failure == null;
        }

        boolean sentNothing() {
            return lastSend == null;
        }
    }

    private BoundedSend() {}

    /**
     * Sends with {@code send} (given the bound for Redisson) until {@code deadline} (ticker nanos).
     *
     * @throws PidPoolException an answer that is an error other than {@code UNAVAILABLE} (bad input,
     *     a script failure): Redis did answer, so the circuit is closed and nothing is repeated
     */
    static <T> Outcome<T> before(
            long deadline, Ticker ticker, RedisCircuit circuit, Function<Duration, CompletableFuture<T>> send) {
        PidPoolException failure = null;
        CompletableFuture<T> last = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            long left = deadline - ticker.read();
            if (left < MIN_SEND_NANOS) {
                break;
            }
            last = send.apply(Duration.ofNanos(left));
            last.whenComplete((answer, error) -> {
                if (error == null) {
                    circuit.succeeded(); // also a late answer: Redis is back
                }
            });
            try {
                return new Outcome<>(last.get(left, TimeUnit.NANOSECONDS), null, last);
            } catch (TimeoutException e) {
                failure = PidPoolException.unavailable("no answer in time", e);
                break;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = PidPoolException.unavailable("interrupted while waiting for Redis", e);
                break;
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (!(cause instanceof PidPoolException p)) {
                    throw new PidPoolException(ErrorCode.UNAVAILABLE, null, "Redis call failed: " + cause, cause);
                }
                if (p.code() != ErrorCode.UNAVAILABLE) {
                    throw new PidPoolException(p.code(), p.field(), p.getMessage(), p);
                }
                failure = p; // failed early: the same call again if time is left
            }
        }
        if (failure == null) {
            failure = PidPoolException.unavailable("no time left to ask Redis", null);
        }
        return new Outcome<>(null, failure, last);
    }
}
