package io.pidpool.server.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link JdbiModuleMoves} on H2, and PostgreSQL / MariaDB when configured: which modules gained or
 * lost a PID since an instant, from the operation log (exact vs estimated module usage).
 */
@ExtendWith(SharedTestDatabases.class)
class JdbiModuleMovesIT {
    static final SecretSealer SEALER = SecretSealer.fromSingleKey("MDEyMzQ1Njc4OWFiY2RlZg==");
    static final ModuleKey A = ModuleKey.parse("fin#risk#a");
    static final ModuleKey B = ModuleKey.parse("fin#risk#b");
    static final ModuleKey C = ModuleKey.parse("fin#risk#c");
    static final ModuleKey D = ModuleKey.parse("fin#risk#d");
    static final Instant LAST_MONTH = Instant.parse("2026-10-20T00:00:00Z");
    static final Instant MONTH_START = Instant.parse("2026-11-01T00:00:00Z");

    long nextBatch = 1;

    static PidSpec<String> spec(String id) {
        return new PidSpec<>(id, "pw", 10, 0, Map.of());
    }

    /** A batch appended and finished with the given outcome at the clock's time. */
    @SafeVarargs
    final void batch(Repositories repos, boolean ok, Operation<String>... ops) {
        BatchId id = new BatchId(nextBatch++);
        repos.operations()
                .append(BatchRecord.pending(
                        OperationBatch.pending(id, List.of(ops), "ops", Instant.EPOCH), SEALER::seal));
        repos.operations().markDealing(id, new Epoch(1));
        List<OperationResult> results = new ArrayList<>();
        for (int i = 0; i < ops.length; i++) {
            results.add(ok ? OperationResult.ok(i) : new OperationResult(i, false, "refused"));
        }
        repos.operations().finish(id, ok ? BatchStatus.DEALED : BatchStatus.FAILED, results, new Epoch(1));
    }

    @Test
    void onlyModulesAPidEnteredOrLeftThisMonthCount() {
        for (TestDatabase db : SharedTestDatabases.available()) {
            ManualClock clock = new ManualClock(LAST_MONTH);
            Repositories repos = db.fresh(clock);
            JdbiModuleMoves moves = db.database().moduleMoves();
            nextBatch = 1;
            // last month: p1 into A, p2 into B, p3 into C, then p1 moved to D (all before this month)
            batch(
                    repos,
                    true,
                    new Operation.Add<>(A, List.of(spec("p1"))),
                    new Operation.Add<>(B, List.of(spec("p2"))));
            batch(repos, true, new Operation.Add<>(C, List.of(spec("p3"))));
            batch(repos, true, new Operation.Migrate<>(List.of("p1"), D));
            // this month: new p4 into A (no move), a failed MIGRATE of p2 (no move)
            clock.set(MONTH_START.plus(Duration.ofDays(2)));
            batch(repos, true, new Operation.Add<>(A, List.of(spec("p4"))));
            batch(repos, false, new Operation.Migrate<>(List.of("p2"), A));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEmpty();

            // this month: p3 deleted from C -> C changed
            batch(repos, true, new Operation.Delete<>(List.of("p3")));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).containsExactly(C);

            // p1 from D to A -> both changed (the previous placement is last month's MIGRATE)
            batch(repos, true, new Operation.Migrate<>(List.of("p1"), A));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEqualTo(Set.of(A, C, D));
            // seen from a later instant, nothing moved
            assertThat(moves.changedSince(clock.instant().plusSeconds(1))).isEmpty();
        }
    }

    @Test
    void aLaterCallReadsOnlyNewBatchesAndStillSeesOneThatFinishedOutOfOrder() {
        for (TestDatabase db : SharedTestDatabases.available()) {
            ManualClock clock = new ManualClock(LAST_MONTH);
            Repositories repos = db.fresh(clock);
            JdbiModuleMoves moves = db.database().moduleMoves();
            nextBatch = 1;
            batch(repos, true, new Operation.Add<>(A, List.of(spec("p1"), spec("p2"))));
            clock.set(MONTH_START.plus(Duration.ofDays(1)));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEmpty();

            // batch 2 is recorded first but finishes after batch 3
            BatchId late = new BatchId(nextBatch++);
            repos.operations()
                    .append(BatchRecord.pending(
                            OperationBatch.pending(
                                    late, List.of(new Operation.Migrate<>(List.of("p2"), B)), "ops", Instant.EPOCH),
                            SEALER::seal));
            batch(repos, true, new Operation.Add<>(C, List.of(spec("p3"))));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEmpty();
            repos.operations().markDealing(late, new Epoch(1));
            repos.operations().finish(late, BatchStatus.DEALED, List.of(OperationResult.ok(0)), new Epoch(1));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEqualTo(Set.of(A, B));

            batch(repos, true, new Operation.Delete<>(List.of("p3")));
            assertThat(moves.changedSince(MONTH_START)).as(db.toString()).isEqualTo(Set.of(A, B, C));
        }
    }
}
