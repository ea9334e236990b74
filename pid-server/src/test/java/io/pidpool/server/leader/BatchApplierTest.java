package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidRecord;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.Repositories;
import io.pidpool.server.jdbc.Database;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An ADD that meets PIDs which exist by the time the leader applies it (added after the batch was
 * accepted) fails alone and leaves nothing behind, not even the module it would have created; the
 * other operations of the batch apply. On the in-memory fake and on H2 through the real adapters.
 */
class BatchApplierTest {
    static final ModuleKey EXISTING = ModuleKey.parse("fin#risk#scorer");
    static final ModuleKey FRESH = ModuleKey.parse("fin#risk#fresh");
    static final Epoch EPOCH = new Epoch(1);
    static final SealedSecret SECRET = BatchAuditAtomicityIT.SEALER.seal("pw");

    Database database;

    @AfterEach
    void close() {
        if (database != null) {
            database.close();
        }
    }

    static Stream<Arguments> stores() {
        return Stream.of(Arguments.of("in-memory"), Arguments.of("h2"));
    }

    Repositories open(String store) {
        if (store.equals("in-memory")) {
            return InMemoryDatabase.create().repositories();
        }
        database = Database.open(
                "jdbc:h2:mem:applier_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1",
                null,
                null);
        return database.repositories(Clock.systemUTC());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void anAddIntoAKnownModuleThatMeetsAnExistingPidFailsAloneAndWritesNothing(String store) {
        Repositories repos = prepared(store);

        BatchRecord done = apply(repos, new Operation.Add<>(EXISTING, specs("p-2", "p-1")), addOf("p-3"));

        assertThat(done.status()).isEqualTo(BatchStatus.DEALED);
        assertThat(done.results()).extracting(OperationResult::ok).containsExactly(false, true);
        assertThat(done.results().get(0).message()).contains("p-1").doesNotContain("p-2");
        assertThat(repos.pids().find("p-2")).isEmpty();
        assertThat(repos.pids().find("p-3")).isPresent();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void anAddIntoANewModuleThatMeetsAnExistingPidCreatesNoModule(String store) {
        Repositories repos = prepared(store);

        BatchRecord done = apply(repos, new Operation.Add<>(FRESH, specs("p-2", "p-1")), addOf("p-3"));

        assertThat(done.results()).extracting(OperationResult::ok).containsExactly(false, true);
        assertThat(done.results().get(0).message()).contains("p-1");
        assertThat(repos.modules().find(FRESH)).isEmpty();
        assertThat(repos.pids().find("p-2")).isEmpty();
        assertThat(repos.pids().find("p-1").orElseThrow().module()).isEqualTo(EXISTING);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stores")
    void anAddIntoANewModuleCreatesIt(String store) {
        Repositories repos = prepared(store);

        BatchRecord done = apply(repos, new Operation.Add<>(FRESH, specs("q-1", "q-2")));

        assertThat(done.results()).extracting(OperationResult::ok).containsExactly(true);
        assertThat(repos.modules().find(FRESH)).isPresent();
        assertThat(repos.pids().modulesOf(List.of("q-1", "q-2"))).containsOnlyKeys("q-1", "q-2");
    }

    /** A store with module {@link #EXISTING} holding p-1. */
    private Repositories prepared(String store) {
        Repositories repos = open(store);
        repos.fence().raise(EPOCH);
        repos.modules().put(ModuleConfig.of(EXISTING, 1));
        repos.pids().insertAll(List.of(PidRecord.added(specs("p-1").get(0), EXISTING)));
        return repos;
    }

    @SafeVarargs
    private static BatchRecord apply(Repositories repos, Operation<SealedSecret>... operations) {
        BatchId id = new BatchId(42);
        repos.operations().append(BatchRecord.pending(id, List.of(operations), "ops", Instant.now()));
        return new BatchApplier(repos, () -> {}).apply(id, EPOCH).orElseThrow().batch();
    }

    private static Operation<SealedSecret> addOf(String id) {
        return new Operation.Add<>(EXISTING, specs(id));
    }

    private static List<PidSpec<SealedSecret>> specs(String... ids) {
        return Stream.of(ids)
                .map(id -> new PidSpec<>(id, SECRET, 100, 0, Map.of()))
                .toList();
    }
}
