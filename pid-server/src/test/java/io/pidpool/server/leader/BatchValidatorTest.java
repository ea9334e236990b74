package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link BatchValidator} against the in-memory store: stored state, pending batches, batch order. */
class BatchValidatorTest {
    static final SecretSealer SEALER = SecretSealer.fromSingleKey("MDEyMzQ1Njc4OWFiY2RlZg==");
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey OPS = ModuleKey.parse("ops#billing#api");
    static final ModuleKey NEW = ModuleKey.parse("new#team#app");

    final Repositories repos = InMemoryDatabase.create().repositories();
    final Set<ModuleKey> registered = new HashSet<>();
    final BatchValidator validator = new BatchValidator(repos, registered::contains);
    long nextBatch = 1;

    static Operation<String> add(ModuleKey module, String... ids) {
        return new Operation.Add<>(
                module,
                java.util.Arrays.stream(ids)
                        .map(id -> new PidSpec<>(id, "pw", 10, 0, Map.of()))
                        .toList());
    }

    @BeforeEach
    void store() {
        repos.modules().put(ModuleConfig.of(FIN, 2));
        repos.modules().put(ModuleConfig.of(OPS, 1));
        repos.pids()
                .insertAll(List.of(
                        PidRecord.added(new PidSpec<>("u1", "pw", 10, 0, Map.of()).withSecret(SEALER::seal), FIN),
                        PidRecord.added(new PidSpec<>("u2", "pw", 10, 0, Map.of()).withSecret(SEALER::seal), OPS)));
    }

    @SafeVarargs
    final void pending(Operation<String>... ops) {
        OperationBatch batch = OperationBatch.pending(new BatchId(nextBatch++), List.of(ops), "ops", Instant.EPOCH);
        repos.operations().append(BatchRecord.pending(batch, SEALER::seal));
    }

    @SafeVarargs
    final PidPoolException refused(Operation<String>... ops) {
        return catchThrowableOfType(() -> validator.check(List.of(ops)), PidPoolException.class);
    }

    @SafeVarargs
    final void accepted(Operation<String>... ops) {
        assertThatCode(() -> validator.check(List.of(ops))).doesNotThrowAnyException();
    }

    @Test
    void storedStateDecides() {
        accepted(add(FIN, "n1"), new Operation.Delete<>(List.of("u1")), new Operation.Migrate<>(List.of("u2"), FIN));
        assertThat(refused(add(OPS, "n1", "u1")))
                .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT))
                .satisfies(e -> assertThat(e.field()).isEqualTo("operations[0].pids[1].id"))
                .hasMessageContaining("u1 already exists (in module fin#risk#scorer)");
        assertThat(refused(new Operation.ResetQuota<>(List.of("u1", "zz"))).field())
                .isEqualTo("operations[0].pids[1]");
        assertThat(refused(new Operation.Update<>(List.of(new PidSpec<>("zz", "pw", 1, 0, Map.of()))))
                        .field())
                .isEqualTo("operations[0].pids[0].id");
        assertThat(refused(new Operation.Migrate<>(List.of("u2", "u1"), FIN)))
                .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .satisfies(e -> assertThat(e.field()).isEqualTo("operations[0].to"))
                .hasMessageContaining("[u1]");
        assertThat(refused(add(NEW, "n1")))
                .satisfies(e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND))
                .satisfies(e -> assertThat(e.field()).isEqualTo("operations[0].module"));
        assertThat(refused(new Operation.Migrate<>(List.of("u1"), NEW)).field()).isEqualTo("operations[0].to");
    }

    @Test
    void aModuleIsKnownWhenConfiguredEarlierInTheBatchOrRegisteredInZooKeeper() {
        accepted(new Operation.SetServers<>(NEW, 1, 0), add(NEW, "n1"));
        assertThat(refused(add(NEW, "n1"), new Operation.SetServers<>(NEW, 1, 0))
                        .field())
                .isEqualTo("operations[0].module");
        registered.add(NEW);
        accepted(add(NEW, "n1"));
    }

    @Test
    void laterOperationsSeeTheEarlierOnesOfTheBatch() {
        accepted(
                add(FIN, "n1"), new Operation.Migrate<>(List.of("u2"), FIN), new Operation.ResetQuota<>(List.of("u1")));
        assertThat(refused(new Operation.Delete<>(List.of("u1")), new Operation.Migrate<>(List.of("u2"), OPS))
                        .field())
                .isEqualTo("operations[1].to");
    }

    @Test
    void pendingBatchesAreReplayedInOrder() {
        pending(add(FIN, "p1"));
        pending(new Operation.Delete<>(List.of("u2")));
        pending(new Operation.SetServers<>(NEW, 1, 0));
        assertThat(refused(add(OPS, "p1")).code()).isEqualTo(ErrorCode.CONFLICT);
        accepted(new Operation.Delete<>(List.of("p1")));
        accepted(add(OPS, "u2"));
        assertThat(refused(new Operation.ResetQuota<>(List.of("u2"))).code()).isEqualTo(ErrorCode.NOT_FOUND);
        accepted(add(NEW, "n1"));

        // once applied (here: the pending rows finished), the stored state decides alone
        repos.operations().recent(10).forEach(b -> {
            repos.operations().markDealing(b.id(), new io.pidpool.core.model.Epoch(1));
            repos.operations()
                    .finish(
                            b.id(),
                            io.pidpool.core.model.BatchStatus.FAILED,
                            List.of(io.pidpool.core.model.OperationResult.failed(0, "test")),
                            new io.pidpool.core.model.Epoch(1));
        });
        accepted(add(OPS, "p1"));
        accepted(new Operation.ResetQuota<>(List.of("u2")));
        assertThat(refused(add(NEW, "n1")).code()).isEqualTo(ErrorCode.NOT_FOUND);
    }
}
