package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.Operation;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Transactor;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What every {@link Transactor} does for the repositories it shares. */
public abstract class TransactorContract extends RepositoryContract {

    private BatchRecord batch(long id) {
        return BatchRecord.pending(
                new BatchId(id), List.of(new Operation.Delete<>(List.of("u" + id))), "alice", clock.instant());
    }

    private AuditEntry audit(long id) {
        return new AuditEntry(id, clock.instant(), "alice", "batch.accepted", "batch:" + id, "");
    }

    @Test
    void anAcceptedBatchAndItsAuditRowCommitTogether() {
        String answer = repos.transactor().inTransaction(() -> {
            repos.operations().append(batch(1));
            repos.audit().append(audit(1));
            return "accepted";
        });

        assertThat(answer).isEqualTo("accepted");
        assertThat(repos.operations().find(new BatchId(1))).isPresent();
        assertThat(repos.audit().forTarget("batch:1", 10)).hasSize(1);
    }

    @Test
    void anExceptionRollsEverythingBackAndIsRethrownUnchanged() {
        var boom = new IllegalStateException("boom");

        Throwable thrown = catchThrowable(() -> repos.transactor().useTransaction(() -> {
            repos.operations().append(batch(1));
            repos.audit().append(audit(1));
            throw boom;
        }));

        assertThat(thrown).isSameAs(boom);
        assertThat(repos.operations().find(new BatchId(1))).isEmpty();
        assertThat(repos.audit().recent(10)).isEmpty();
    }

    @Test
    void aFailedCallInsideATransactionLeavesNothingAndTheTransactionGoesOn() {
        givenModules(FIN);
        repos.pids().insert(pid("u1", FIN));
        repos.audit().append(audit(9));

        repos.transactor().useTransaction(() -> {
            repos.operations().append(batch(1));
            expectError(ErrorCode.CONFLICT, "pid.id", () -> repos.pids()
                    .insertAll(List.of(pid("u2", FIN), pid("u1", FIN))));
            // a failure the store itself detects (a unique key) must not poison the transaction either
            expectError(ErrorCode.CONFLICT, "id", () -> repos.audit().append(audit(9)));
            repos.pids().insert(pid("u3", FIN));
        });

        assertThat(repos.operations().find(new BatchId(1))).isPresent();
        assertThat(repos.pids().findByModule(FIN)).extracting(p -> p.id()).containsExactly("u1", "u3");
        assertThat(repos.audit().recent(10)).extracting(AuditEntry::id).containsExactly(9L);
    }

    @Test
    void aDatabaseErrorEscapingTheWorkRollsBackTheWholeUnit() {
        repos.audit().append(audit(1));

        expectError(ErrorCode.CONFLICT, "id", () -> repos.transactor().useTransaction(() -> {
            repos.operations().append(batch(2));
            repos.audit().append(audit(1));
        }));

        assertThat(repos.operations().find(new BatchId(2))).isEmpty();
    }

    @Test
    void aNestedUnitThatFailsRollsBackAloneWhenTheOuterWorkCatchesIt() {
        repos.transactor().useTransaction(() -> {
            repos.audit().append(audit(1));
            Throwable inner = catchThrowable(() -> repos.transactor().useTransaction(() -> {
                repos.operations().append(batch(2));
                throw PidPoolException.invalid("x", "inner failure");
            }));
            assertThat(inner).hasMessage("inner failure");
            repos.operations().append(batch(3));
        });

        assertThat(repos.audit().recent(10)).hasSize(1);
        assertThat(repos.operations().find(new BatchId(2))).isEmpty();
        assertThat(repos.operations().find(new BatchId(3))).isPresent();
    }
}
