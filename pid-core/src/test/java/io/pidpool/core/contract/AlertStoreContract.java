package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.advice.Alert;
import io.pidpool.core.advice.AlertKind;
import io.pidpool.core.advice.AlertState;
import io.pidpool.core.advice.Severity;
import io.pidpool.core.advice.StoredAlert;
import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.AlertStore;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link AlertStore} does: one OPEN alert per key, episodes, ordering, limits. */
public abstract class AlertStoreContract {
    protected final ManualClock clock = ManualClock.at("2026-11-16T08:00:00.123Z");
    protected AlertStore store;

    /** A fresh, empty store. Called before every test. */
    protected abstract AlertStore newStore();

    @BeforeEach
    final void freshStore() {
        store = newStore();
    }

    private static Alert pidAt(String pid, int pct, Instant at) {
        return new Alert(
                AlertKind.PID_UTILISATION + ":" + pid + ":" + pct,
                AlertKind.PID_UTILISATION,
                pct >= 100 ? Severity.CRITICAL : Severity.WARNING,
                pid,
                "PID " + pid + " used " + pct + " %",
                at);
    }

    @Test
    void aRepeatedConditionStaysOneOpenAlertWithMoreOccurrences() {
        Instant t0 = clock.instant();
        AlertStore.Raised first = store.raise(1, pidAt("u1", 80, t0), t0);
        assertThat(first.created()).isTrue();
        assertThat(first.alert().state()).isEqualTo(AlertState.OPEN);
        assertThat(first.alert().occurrences()).isEqualTo(1);

        Instant t1 = t0.plus(Duration.ofMinutes(5));
        Alert again = new Alert(
                first.alert().key(), AlertKind.PID_UTILISATION, Severity.CRITICAL, "u1", "PID u1 used 85 %", t1);
        AlertStore.Raised second = store.raise(2, again, t1);

        assertThat(second.created()).isFalse();
        assertThat(second.alert().id()).isEqualTo(1);
        assertThat(second.alert().occurrences()).isEqualTo(2);
        assertThat(second.alert().lastSeen()).isEqualTo(t1);
        assertThat(second.alert().alert().firstSeen()).isEqualTo(t0);
        assertThat(second.alert().alert().message()).isEqualTo("PID u1 used 85 %");
        assertThat(second.alert().alert().severity()).isEqualTo(Severity.CRITICAL);
        assertThat(store.open()).containsExactly(second.alert());
        assertThat(store.find(2)).isEmpty();
        assertThat(store.find(1)).contains(second.alert());
    }

    @Test
    void resolvingClosesTheEpisodeAndTheSameKeyLaterOpensANewOne() {
        Instant t0 = clock.instant();
        store.raise(1, pidAt("u1", 80, t0), t0);
        Instant t1 = t0.plusSeconds(60);
        Optional<StoredAlert> resolved = store.resolve("PID_UTILISATION:u1:80", t1);

        assertThat(resolved).isPresent();
        assertThat(resolved.get().state()).isEqualTo(AlertState.RESOLVED);
        assertThat(resolved.get().resolvedAt()).contains(t1);
        assertThat(store.open()).isEmpty();
        assertThat(store.resolve("PID_UTILISATION:u1:80", t1)).isEmpty();

        Instant t2 = t1.plusSeconds(60);
        AlertStore.Raised again = store.raise(2, pidAt("u1", 80, t2), t2);
        assertThat(again.created()).isTrue();
        assertThat(again.alert().id()).isEqualTo(2);
        assertThat(store.open()).containsExactly(again.alert());
        assertThat(store.recent(10)).containsExactly(again.alert(), resolved.get());
        assertThat(store.find(1)).contains(resolved.get());
    }

    @Test
    void openListsOldestFirstAndRecentNewestFirstAcrossStates() {
        Instant t0 = clock.instant();
        StoredAlert a = store.raise(30, pidAt("a", 80, t0), t0).alert();
        StoredAlert b = store.raise(10, pidAt("b", 80, t0.plusSeconds(1)), t0.plusSeconds(1))
                .alert();
        StoredAlert c = store.raise(20, pidAt("c", 100, t0.plusSeconds(1)), t0.plusSeconds(1))
                .alert();
        StoredAlert aResolved = store.resolve(a.key(), t0.plusSeconds(2)).orElseThrow();

        assertThat(store.open()).containsExactly(b, c);
        assertThat(store.recent(10)).containsExactly(c, b, aResolved);
        assertThat(store.recent(1)).containsExactly(c);
        expectError(ErrorCode.INVALID_ARGUMENT, "limit", () -> store.recent(0));
    }

    @Test
    void timesAreKeptToTheMillisecondAndLongMessagesCut() {
        Instant precise = Instant.parse("2026-11-16T08:00:00.123456789Z");
        Alert alert = new Alert(
                "PROJECTED_OVERAGE:fin#risk#scorer",
                AlertKind.PROJECTED_OVERAGE,
                Severity.WARNING,
                "fin#risk#scorer",
                "m".repeat(StoredAlert.MAX_MESSAGE + 50),
                precise);
        StoredAlert stored = store.raise(7, alert, precise).alert();

        assertThat(stored.alert().firstSeen()).isEqualTo(Instant.parse("2026-11-16T08:00:00.123Z"));
        assertThat(stored.alert().message()).hasSize(StoredAlert.MAX_MESSAGE);
        assertThat(store.find(7)).contains(stored);
        assertThat(store.open()).containsExactly(stored);
    }

    @Test
    void tooLongKeysAreRefusedAndChangeNothing() {
        Instant t0 = clock.instant();
        String longKey = "BRAKE_ENGAGED:" + "x".repeat(StoredAlert.MAX_KEY);
        Alert bad = new Alert(longKey, AlertKind.BRAKE_ENGAGED, Severity.CRITICAL, "x", "too long", t0);

        expectError(ErrorCode.INVALID_ARGUMENT, "alert.key", () -> store.raise(1, bad, t0));
        assertThat(store.open()).isEmpty();
        assertThat(store.find(1)).isEmpty();
    }

    @Test
    void aNewEpisodeReusingAnIdIsAConflict() {
        Instant t0 = clock.instant();
        StoredAlert first = store.raise(1, pidAt("a", 80, t0), t0).alert();

        expectError(ErrorCode.CONFLICT, "id", () -> store.raise(1, pidAt("b", 80, t0), t0));
        assertThat(store.open()).containsExactly(first);
    }

    @Test
    void concurrentRaisesOfOneKeyLeaveOneOpenAlertCountingEveryOccurrence() throws Exception {
        int threads = 4;
        int perThread = 10;
        Instant t0 = clock.instant();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        ConcurrentLinkedQueue<AlertStore.Raised> results = new ConcurrentLinkedQueue<>();
        List<Future<?>> futures = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int base = t * 1000;
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        results.add(store.raise(base + i + 1, pidAt("hot", 80, t0), t0));
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(results.stream().filter(AlertStore.Raised::created)).hasSize(1);
        assertThat(store.open()).hasSize(1);
        assertThat(store.open().get(0).occurrences()).isEqualTo(threads * perThread);
    }

    /** Runs {@code call}, expecting a {@link PidPoolException} with this code and field. */
    protected static void expectError(ErrorCode code, String field, ThrowingCallable call) {
        Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("expected %s on %s", code, field).isInstanceOf(PidPoolException.class);
        PidPoolException e = (PidPoolException) thrown;
        assertThat(e.code()).as("code of: %s", e.getMessage()).isEqualTo(code);
        assertThat(e.field()).as("field of: %s", e.getMessage()).isEqualTo(field);
    }
}
