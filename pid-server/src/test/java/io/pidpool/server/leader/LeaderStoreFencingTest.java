package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.fake.InMemoryCooldownRepository;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidState;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Cooldown;
import io.pidpool.core.port.Repositories;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A deposed leader's database writes: leader A (epoch 1) is superseded by B (epoch 2), B writes, then
 * A, paused until now, writes what it decided before. Every such write must be refused and change
 * nothing.
 */
class LeaderStoreFencingTest {
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey OPS = ModuleKey.parse("ops#monitor#collector");
    static final Epoch A = new Epoch(1);
    static final Epoch B = new Epoch(2);

    final Repositories repos = InMemoryDatabase.create().repositories();
    final InMemoryCooldownRepository cooldowns = new InMemoryCooldownRepository(repos.pids());
    final LeaderDatabase leaderA = new RepositoryLeaderStore(repos, cooldowns);
    final LeaderDatabase leaderB = new RepositoryLeaderStore(repos, cooldowns);

    static PidRecord pid(String id, ModuleKey module, long quota) {
        return new PidRecord(
                id, module, quota, 0, PidAvailability.ACTIVE, new SealedSecret("k", id.getBytes()), Map.of());
    }

    @BeforeEach
    void twoTerms() {
        repos.modules().put(ModuleConfig.of(FIN, 2));
        repos.modules().put(ModuleConfig.of(OPS, 2));
        repos.pids().insertAll(List.of(pid("u1", FIN, 100), pid("u2", FIN, 100)));
        leaderA.beginTerm(A);
        leaderB.beginTerm(B);
    }

    @Test
    void aDeposedLeaderCannotUndoItsSuccessorsPidUpdate() {
        leaderB.updatePids(List.of(pid("u1", OPS, 50)), B); // B's MIGRATE + UPDATE

        expectFenced(() -> leaderA.updatePids(List.of(pid("u1", FIN, 100).withStatus(PidAvailability.COOLDOWN)), A));

        PidRecord stored = repos.pids().find("u1").orElseThrow();
        assertThat(stored.module()).isEqualTo(OPS);
        assertThat(stored.monthlyQuota()).isEqualTo(50);
        assertThat(stored.status()).isEqualTo(PidAvailability.ACTIVE);
    }

    @Test
    void aDeposedLeadersRowsCooldownsAndPruningAreRefused() {
        Assignment row = new Assignment("u2", FIN, InstanceId.of("host-1"), PidState.ADDING, A, 7);
        Instant now = Instant.parse("2026-01-01T00:00:00Z");

        expectFenced(() -> leaderA.recordAssignments(List.of(row), A));
        expectFenced(() -> leaderA.removeAssignments(List.of("u2"), A));
        expectFenced(() -> leaderA.recordCooldowns(
                List.of(new Cooldown("u2", now.plusSeconds(60), "login failed", now)), List.of(), A));
        expectFenced(() -> leaderA.pruneChanges(1, A));

        assertThat(repos.assignments().findAll()).isEmpty();
        assertThat(cooldowns.findAll()).isEmpty();
        leaderB.recordAssignments(
                List.of(new Assignment("u2", FIN, InstanceId.of("host-1"), PidState.ADDING, B, 7)), B);
        assertThat(repos.assignments().findAll()).hasSize(1);
    }

    @Test
    void aDeposedLeaderCannotApplyABatch() {
        BatchId id = new BatchId(42);
        repos.operations()
                .append(BatchRecord.pending(
                        id, List.of(new Operation.Migrate<>(List.of("u1"), OPS)), "ops", Instant.now()));

        expectFenced(() -> new BatchApplier(repos, () -> {}).apply(id, A));

        assertThat(repos.operations().find(id).orElseThrow().status()).isEqualTo(BatchStatus.PENDING);
        assertThat(repos.pids().find("u1").orElseThrow().module()).isEqualTo(FIN);
        assertThat(new BatchApplier(repos, () -> {}).apply(id, B)).isPresent();
        assertThat(repos.pids().find("u1").orElseThrow().module()).isEqualTo(OPS);
    }

    @Test
    void aTermCannotBeginBelowTheStoredEpoch() {
        expectFenced(() -> leaderA.beginTerm(A));
        assertThat(leaderA.leaderEpoch()).isEqualTo(B);
    }

    private static void expectFenced(ThrowingCallable call) {
        Throwable thrown = catchThrowable(call);
        assertThat(thrown).as("the deposed leader's write was accepted").isInstanceOf(PidPoolException.class);
        assertThat(((PidPoolException) thrown).code()).as(thrown.getMessage()).isEqualTo(ErrorCode.FENCED);
    }
}
