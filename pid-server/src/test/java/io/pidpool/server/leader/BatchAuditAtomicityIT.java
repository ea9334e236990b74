package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.AuditLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.server.jdbc.Database;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The accepted batch and its audit row on a real database (H2 through Jdbi): they commit together,
 * and a failure after the audit insert, or in it, leaves neither behind.
 */
class BatchAuditAtomicityIT {
    static final SecretSealer SEALER = SecretSealer.fromSingleKey("MDEyMzQ1Njc4OWFiY2RlZg==");
    static final List<Operation<String>> ADD = List.of(new Operation.Add<>(
            ModuleKey.parse("fin#risk#scorer"), List.of(new PidSpec<>("u1", "pw", 10, 0, Map.of()))));

    Database database;
    Repositories store;
    ScheduledExecutorService io;
    final AtomicLong ids = new AtomicLong(5000);

    @BeforeEach
    void open() {
        database = Database.open(
                "jdbc:h2:mem:atomic_" + UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1",
                null,
                null);
        store = database.repositories(Clock.systemUTC());
        io = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void close() {
        io.shutdownNow();
        database.close();
    }

    BatchService service(AuditLog audit) {
        Repositories repos = BatchServiceTest.with(store, store.operations(), audit);
        return new BatchService(
                repos, SEALER::seal, ids::incrementAndGet, Clock.systemUTC(), s -> {}, io, Duration.ofMillis(100));
    }

    @Test
    void committedTogether() {
        var id = service(store.audit()).submit(ADD, "ops");
        assertThat(store.operations().find(id)).isPresent();
        assertThat(store.audit().forTarget(id.toString(), 5))
                .extracting(AuditEntry::action)
                .containsExactly("batch.accepted");
    }

    @Test
    void aFailureAfterTheAuditInsertRollsBothBack() {
        AuditLog real = store.audit();
        AuditLog failing = new AuditLog() {
            @Override
            public void append(AuditEntry entry) {
                real.append(entry);
                // inside the transaction the row is there ...
                assertThat(real.recent(1)).extracting(AuditEntry::id).containsExactly(entry.id());
                throw PidPoolException.unavailable("connection lost after the audit insert", null);
            }

            @Override
            public List<AuditEntry> recent(int limit) {
                return real.recent(limit);
            }

            @Override
            public List<AuditEntry> forTarget(String target, int limit) {
                return real.forTarget(target, limit);
            }

            @Override
            public List<AuditEntry> olderThan(long id, int limit) {
                return real.olderThan(id, limit);
            }
        };
        assertThatThrownBy(() -> service(failing).submit(ADD, "ops")).hasMessageContaining("after the audit insert");
        // ... and after the rollback neither it nor the batch is
        assertThat(store.audit().recent(10)).isEmpty();
        assertThat(store.operations().recent(10)).isEmpty();
    }

    @Test
    void aFailingAuditInsertRollsBackTheBatch() {
        // the audit id the service will draw next is taken already: the audit insert fails (CONFLICT)
        // after the batch rows were inserted
        long batchId = ids.get() + 1;
        long auditId = ids.get() + 2;
        store.audit().append(new AuditEntry(auditId, java.time.Instant.now(), "someone", "probe", "", ""));
        assertThatThrownBy(() -> service(store.audit()).submit(ADD, "ops")).isInstanceOf(PidPoolException.class);
        assertThat(store.operations().find(new io.pidpool.core.model.BatchId(batchId)))
                .isEmpty();
        assertThat(store.audit().recent(10)).extracting(AuditEntry::action).containsExactly("probe");
    }
}
