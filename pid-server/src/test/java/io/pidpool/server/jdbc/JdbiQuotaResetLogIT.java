package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.groups.Tuple.tuple;

import io.pidpool.core.port.QuotaResetLog;
import io.pidpool.core.port.Repositories;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link JdbiQuotaResetLog} (V6 {@code quota_reset}) on H2, and PostgreSQL / MariaDB when configured:
 * generations count up per PID, a rolled-back transaction records nothing (the reset commits with its
 * batch or not at all), and rows outlive the PID.
 */
@ExtendWith(SharedTestDatabases.class)
class JdbiQuotaResetLogIT {
    static final Instant T1 = Instant.parse("2026-11-03T10:00:00Z");
    static final Instant T2 = Instant.parse("2026-11-05T10:00:00Z");

    @Test
    void generationsCountUpPerPidAndCommitWithTheCallersTransaction() {
        for (TestDatabase db : SharedTestDatabases.available()) {
            Repositories repos = db.fresh(Clock.systemUTC());
            QuotaResetLog log = db.database().quotaResets();

            assertThat(log.record(List.of("p1", "p2", "p1"), T1))
                    .as(db.toString())
                    .extracting(QuotaResetLog.Reset::pidId, QuotaResetLog.Reset::generation)
                    .containsExactly(tuple("p1", 1L), tuple("p2", 1L));
            assertThat(log.record(List.of("p1"), T2))
                    .extracting(QuotaResetLog.Reset::generation)
                    .containsExactly(2L);

            // inside a transaction that rolls back: nothing recorded
            assertThatThrownBy(() -> repos.transactor().inTransaction(() -> {
                        log.record(List.of("p1", "p3"), T2);
                        throw new IllegalStateException("batch failed");
                    }))
                    .isInstanceOf(IllegalStateException.class);

            assertThat(log.latest())
                    .as(db.toString())
                    .extracting(QuotaResetLog.Reset::pidId, QuotaResetLog.Reset::generation, QuotaResetLog.Reset::at)
                    .containsExactly(tuple("p1", 2L, T2), tuple("p2", 1L, T1));

            // committed with the caller's transaction
            repos.transactor().inTransaction(() -> log.record(List.of("p3"), T1));
            assertThat(log.latest()).extracting(QuotaResetLog.Reset::pidId).containsExactly("p1", "p2", "p3");
        }
    }
}
