package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Deadlocks on every database, made on purpose: two transactions lock rows A and B in opposite
 * orders, lined up by latches (no sleeps), so the database must roll one of them back.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(SharedTestDatabases.class)
class JdbiSessionIT {
    private static final long DEADLINE_SECONDS = 60;

    private List<TestDatabase> databases;
    private ExecutorService pool;

    @BeforeAll
    void open() {
        databases = SharedTestDatabases.available();
        pool = Executors.newFixedThreadPool(2);
    }

    @AfterAll
    void drop() throws InterruptedException {
        pool.shutdownNow();
        pool.awaitTermination(DEADLINE_SECONDS, TimeUnit.SECONDS);
    }

    List<TestDatabase> databases() {
        return databases;
    }

    private static Repositories seeded(TestDatabase db) {
        Repositories repos = db.fresh(Clock.systemUTC());
        for (long id = 1; id <= 2; id++) {
            repos.audit().append(new AuditEntry(id, Instant.parse("2025-07-09T08:00:00Z"), "t", "row", "", ""));
        }
        return repos;
    }

    private static void lock(Handle h, long auditId) {
        h.createQuery("SELECT audit_id FROM audit_log WHERE audit_id = :id FOR UPDATE")
                .bind("id", auditId)
                .mapTo(Long.class)
                .one();
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(DEADLINE_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the other transaction never got its first lock");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void aRepositoryCallThatLosesADeadlockIsRunAgainAndBothSucceed(TestDatabase db) throws Exception {
        seeded(db);
        JdbiSession session = db.database().session();
        var firstRuns = new AtomicInteger();
        var secondRuns = new AtomicInteger();
        var aLocked = new CountDownLatch(1);
        var bLocked = new CountDownLatch(1);

        // a re-run takes only its first lock, so it cannot deadlock again (H2 may roll back both)
        Future<String> first = pool.submit(() -> session.write(null, h -> {
            lock(h, 1);
            if (firstRuns.incrementAndGet() == 1) {
                aLocked.countDown();
                await(bLocked);
                lock(h, 2);
            }
            return "first";
        }));
        Future<String> second = pool.submit(() -> session.write(null, h -> {
            lock(h, 2);
            if (secondRuns.incrementAndGet() == 1) {
                bLocked.countDown();
                await(aLocked);
                lock(h, 1);
            }
            return "second";
        }));

        assertThat(first.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo("first");
        assertThat(second.get(DEADLINE_SECONDS, TimeUnit.SECONDS)).isEqualTo("second");
        assertThat(firstRuns.get() + secondRuns.get())
                .as("a deadlock victim ran again")
                .isGreaterThanOrEqualTo(3);
        assertThat(firstRuns.get()).isLessThanOrEqualTo(JdbiSession.MAX_ATTEMPTS);
        assertThat(secondRuns.get()).isLessThanOrEqualTo(JdbiSession.MAX_ATTEMPTS);
    }

    @ParameterizedTest(autoCloseArguments = false)
    @MethodSource("databases")
    void aUnitOfWorkWhoseNestedCallLostADeadlockCommitsNothing(TestDatabase db) throws Exception {
        Repositories repos = seeded(db);
        JdbiSession session = db.database().session();
        var aLocked = new CountDownLatch(1);
        var bLocked = new CountDownLatch(1);
        var nestedFailure = new Throwable[1];
        var afterwards = new Throwable[1];

        // the unit writes more rows first, so it is the heavier transaction; the plain call is lighter
        // and usually the victim: either way the invariants below must hold
        Future<?> unit = pool.submit(() -> repos.transactor().useTransaction(() -> {
            repos.audit().append(new AuditEntry(10, Instant.now(), "unit", "before", "", ""));
            nestedFailure[0] = catchThrowable(() -> session.write(null, h -> {
                lock(h, 1);
                aLocked.countDown();
                await(bLocked);
                lock(h, 2);
                return null;
            }));
            if (nestedFailure[0] != null) {
                afterwards[0] = catchThrowable(
                        () -> repos.audit().append(new AuditEntry(11, Instant.now(), "unit", "after", "", "")));
            }
        }));
        Future<?> plain = pool.submit(() -> session.writeOnce(h -> {
            lock(h, 2);
            bLocked.countDown();
            await(aLocked);
            lock(h, 1);
            return null;
        }));

        Throwable unitOutcome = catchThrowable(() -> unit.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
        Throwable plainOutcome = catchThrowable(() -> plain.get(DEADLINE_SECONDS, TimeUnit.SECONDS));

        if (nestedFailure[0] != null) {
            // the unit lost: its nested call, every later call and the unit itself fail; nothing commits
            assertThat(((PidPoolException) nestedFailure[0]).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(((PidPoolException) afterwards[0]).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(unitOutcome).hasCauseInstanceOf(PidPoolException.class);
            assertThat(((PidPoolException) unitOutcome.getCause()).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(plainOutcome).isNull();
            assertThat(repos.audit().recent(10)).extracting(AuditEntry::id).containsExactlyInAnyOrder(1L, 2L);
        } else {
            // the plain unit lost (units are never re-run) and the other one committed whole
            assertThat(plainOutcome).hasCauseInstanceOf(PidPoolException.class);
            assertThat(((PidPoolException) plainOutcome.getCause()).code()).isEqualTo(ErrorCode.UNAVAILABLE);
            assertThat(unitOutcome).isNull();
            assertThat(repos.audit().recent(10)).extracting(AuditEntry::id).containsExactlyInAnyOrder(1L, 2L, 10L);
        }
    }
}
