package io.pidpool.core.singleflight;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.fake.InMemoryFlightCoordination;
import io.pidpool.core.testing.ManualClock;
import io.pidpool.core.testing.ManualTicker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The single-flight state machine over in-memory ports; time and steps move only when told. */
class SingleFlightEngineTest {
    private static final Duration RETENTION = Duration.ofMinutes(1);
    private static final Duration MAX_WAIT = Duration.ofSeconds(30);

    private final InMemoryFlightCoordination zk = new InMemoryFlightCoordination();
    private final ManualClock clock = ManualClock.at("2026-11-27T10:00:00Z");
    private final ManualTicker ticker = new ManualTicker();
    private final AtomicInteger runs = new AtomicInteger();

    /** Runs queued steps only when {@link #drain} is called. */
    private static final class Steps implements Executor {
        final ArrayDeque<Runnable> queue = new ArrayDeque<>();

        @Override
        public void execute(Runnable r) {
            queue.add(r);
        }

        void drain() {
            Runnable r;
            while ((r = queue.poll()) != null) {
                r.run();
            }
        }
    }

    /** One participant: its session, its steps, its engine. */
    private final class Server {
        final InMemoryFlightCoordination.Session session = zk.session();
        final Steps steps = new Steps();
        final SingleFlightEngine engine = new SingleFlightEngine(session, session, clock, ticker, steps, MAX_WAIT);
        final List<FlightState> states = new ArrayList<>();

        Server() {
            engine.onTransition(states::add);
        }

        CompletableFuture<byte[]> fly(Callable<byte[]> work) {
            return engine.fly("report:2026-11", RETENTION, work);
        }
    }

    private Callable<byte[]> work(String value, Runnable during) {
        return () -> {
            runs.incrementAndGet();
            during.run();
            return value.getBytes(UTF_8);
        };
    }

    private static String text(CompletableFuture<byte[]> f) {
        assertThat(f).isDone();
        return new String(f.join(), UTF_8);
    }

    @Test
    void oneHolderRunsTheWorkAndEveryWaiterGetsItsResult() {
        Server a = new Server();
        Server b = new Server();
        Server c = new Server();
        var fb = b.fly(work("from-b", () -> {}));
        var fc = c.fly(work("from-c", () -> {}));
        var fa1 = a.fly(work("from-a", () -> {
            b.steps.drain(); // b and c compete while a runs: both wait
            c.steps.drain();
            assertThat(zk.waiting()).isEqualTo(2);
        }));
        var fa2 = a.fly(work("from-a-again", () -> {})); // same process: joins a's flight
        assertThat(a.engine.inFlight()).isEqualTo(1);

        a.steps.drain();
        b.steps.drain();
        c.steps.drain();

        assertThat(runs).hasValue(1);
        assertThat(List.of(text(fa1), text(fa2), text(fb), text(fc))).containsOnly("from-a");
        assertThat(a.states).containsExactly(FlightState.COMPETING, FlightState.RUNNING, FlightState.DONE);
        assertThat(b.states)
                .containsExactly(FlightState.COMPETING, FlightState.WAITING, FlightState.COMPETING, FlightState.DONE);
        assertThat(zk.locked("report:2026-11")).isFalse(); // published before the lock was released
        assertThat(a.engine.inFlight()).isZero();
    }

    @Test
    void aCallerArrivingAsAFailedFlightEndsStartsANewFlight() {
        Server a = new Server();
        List<CompletableFuture<byte[]>> next = new ArrayList<>();
        var failed = a.fly(() -> {
            runs.incrementAndGet();
            throw new IllegalStateException("boom");
        });
        // called back while the ended flight may still be mapped to its key
        failed.whenComplete((v, e) -> next.add(a.fly(work("second", () -> {}))));
        a.steps.drain();

        assertThat(failed).isCompletedExceptionally();
        assertThat(next).hasSize(1);
        assertThat(text(next.get(0))).isEqualTo("second");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aLiveResultIsAnsweredWithoutRunningAgainAndAnExpiredOneRunsAgain() {
        Server a = new Server();
        Server b = new Server();
        var first = a.fly(work("v1", () -> {}));
        a.steps.drain();
        assertThat(text(first)).isEqualTo("v1");

        clock.advance(RETENTION.minusMillis(1));
        var cached = b.fly(work("v2", () -> {}));
        b.steps.drain();
        assertThat(text(cached)).isEqualTo("v1");
        assertThat(runs).hasValue(1);

        clock.advance(Duration.ofMillis(1));
        var fresh = b.fly(work("v2", () -> {}));
        b.steps.drain();
        assertThat(text(fresh)).isEqualTo("v2");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aFailedWorkFailsEveryWaiterOfItsRoundAndTheNextCallerRunsAgain() {
        Server a = new Server();
        Server b = new Server();
        var fb = b.fly(work("unused", () -> {}));
        var fa = a.fly(() -> {
            runs.incrementAndGet();
            b.steps.drain();
            throw new IllegalStateException("upstream down");
        });
        a.steps.drain();
        b.steps.drain();

        assertThat(runs).hasValue(1);
        for (var f : List.of(fa, fb)) {
            assertThatThrownBy(f::join)
                    .isInstanceOf(CompletionException.class)
                    .cause()
                    .isInstanceOf(FlightFailedException.class)
                    .hasMessageContaining("java.lang.IllegalStateException: upstream down");
        }
        assertThat(b.states).endsWith(FlightState.COMPETING, FlightState.FAILED);

        var later = b.fly(work("recovered", () -> {}));
        b.steps.drain();
        assertThat(text(later)).isEqualTo("recovered");
        assertThat(runs).hasValue(2);
    }

    @Test
    void aWaiterTakesOverFromAnExpiredHolderWhoseLateResultIsRefused() {
        Server a = new Server();
        Server b = new Server();
        var fb = b.fly(work("from-b", () -> {}));
        var fa = a.fly(work("from-a", () -> {
            b.steps.drain(); // b waits on a
            zk.expire(a.session); // a is cut off: its lock vanishes and b is woken
            b.steps.drain(); // b takes over, runs the work again, publishes
        }));
        a.steps.drain();
        a.steps.drain();

        assertThat(runs).hasValue(2);
        assertThat(text(fb)).isEqualTo("from-b");
        assertThat(text(fa)).isEqualTo("from-b"); // a's own result was refused; it took b's
        assertThat(zk.stored("report:2026-11").orElseThrow().value()).isEqualTo("from-b".getBytes(UTF_8));
        assertThat(a.states)
                .containsExactly(FlightState.COMPETING, FlightState.RUNNING, FlightState.COMPETING, FlightState.DONE);
    }

    @Test
    void aWaiterGivesUpAfterMaxWait() {
        Server a = new Server();
        Server b = new Server();
        var fb = b.fly(work("unused", () -> {}));
        var fa = a.fly(work("slow", () -> {
            b.steps.drain();
            ticker.advance(MAX_WAIT);
            zk.wakeWaiters(); // the adapter's own timeout
            b.steps.drain();
        }));
        a.steps.drain();

        assertThatThrownBy(fb::join)
                .cause()
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAVAILABLE))
                .hasMessageContaining("maxWait");
        assertThat(text(fa)).isEqualTo("slow"); // the holder's own work is not cut short
    }

    @Test
    void aResultOverTheLimitIsAFailureForEveryone() {
        Server a = new Server();
        var fa = a.fly(() -> new byte[FlightRecord.MAX_VALUE_BYTES + 1]);
        a.steps.drain();
        assertThatThrownBy(fa::join)
                .cause()
                .isInstanceOf(FlightFailedException.class)
                .hasMessageContaining("limit");
        assertThat(zk.stored("report:2026-11").orElseThrow().kind()).isEqualTo(FlightRecord.Kind.FAILURE);
    }

    @Test
    void badInputIsRefusedAtOnceAndStartsNothing() {
        Server a = new Server();
        for (String key : new String[] {"", "a/b", "..", "x".repeat(129), "key with space"}) {
            assertThatThrownBy(() -> a.engine.fly(key, RETENTION, () -> new byte[0]))
                    .isInstanceOfSatisfying(
                            PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        }
        assertThatThrownBy(() -> a.engine.fly("k", Duration.ZERO, () -> new byte[0]))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("retention");
        assertThatThrownBy(() -> a.engine.fly("k", RETENTION, null)).isInstanceOf(PidPoolException.class);
        assertThat(a.engine.inFlight()).isZero();
        assertThat(a.steps.queue).isEmpty();
    }

    @Test
    void recordsSurviveTheirEncoding() {
        for (FlightRecord r : List.of(
                FlightRecord.pending(7, 1000),
                FlightRecord.success(8, 2000, "x".getBytes(UTF_8)),
                FlightRecord.failure(9, 3000, "java.io.IOException", "boom"))) {
            assertThat(FlightRecord.decode(r.encode())).isEqualTo(r);
        }
        byte[] truncated = FlightRecord.success(8, 2000, new byte[10]).encode();
        assertThatThrownBy(() -> FlightRecord.decode(java.util.Arrays.copyOf(truncated, truncated.length - 1)))
                .isInstanceOf(PidPoolException.class);
    }
}
