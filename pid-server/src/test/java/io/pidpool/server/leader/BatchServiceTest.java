package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.fake.InMemoryDatabase;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.port.AuditEntry;
import io.pidpool.core.port.AuditLog;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.Repositories;
import io.pidpool.core.secret.SecretSealer;
import io.pidpool.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link BatchService} over the in-memory repositories and a manual scheduler: waiters on one server
 * share one poll (coalesced waiters), and a batch, its audit row and the check before
 * them commit or roll back together.
 */
class BatchServiceTest {
    static final SecretSealer SEALER = SecretSealer.fromSingleKey("MDEyMzQ1Njc4OWFiY2RlZg==");
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");
    static final List<Operation<String>> ADD =
            List.of(new Operation.Add<>(FIN, List.of(new PidSpec<>("u1", "pw", 10, 0, Map.of()))));

    final ManualClock clock = new ManualClock(Instant.parse("2026-11-21T08:00:00Z"));
    final Repositories store = InMemoryDatabase.create().repositories();
    CountingOperationLog counted;
    final AtomicLong ids = new AtomicLong(1000);
    final ManualScheduler io = new ManualScheduler();
    /** The batches the service handed on for the leader, as recorded. */
    final List<BatchRecord> recorded = new ArrayList<>();

    BatchService service(Repositories repos) {
        return new BatchService(
                repos, SEALER::seal, ids::incrementAndGet, clock, recorded::add, io, Duration.ofMillis(500));
    }

    /** The store, counting the batch reads. */
    Repositories counting() {
        counted = new CountingOperationLog(store.operations());
        return with(store, counted, store.audit());
    }

    static Repositories with(Repositories r, OperationLog operations, AuditLog audit) {
        return new Repositories(
                r.transactor(),
                r.modules(),
                r.pids(),
                r.assignments(),
                r.slots(),
                operations,
                audit,
                r.usage(),
                r.fence());
    }

    void deal(BatchId id) {
        store.operations().markDealing(id, new Epoch(1));
        store.operations().finish(id, BatchStatus.DEALED, List.of(OperationResult.ok(0)), new Epoch(1));
    }

    @Test
    void aHundredWaitersOnOneBatchShareOnePollAndOneStatusReadPerLook() {
        BatchService batches = service(counting());
        BatchId id = batches.submit(ADD, "ops");
        assertThat(recorded)
                .as("the leader is handed the batch as stored")
                .containsExactly(store.operations().find(id).orElseThrow());

        List<CompletableFuture<BatchRecord>> waiters = IntStream.range(0, 100)
                .mapToObj(i -> batches.await(id, Duration.ofMinutes(1)))
                .toList();
        assertThat(batches.waiting()).isEqualTo(100);
        assertThat(io.live(true)).as("one poller for every waiter").hasSize(1);
        assertThat(waiters).noneMatch(CompletableFuture::isDone);

        counted.finds.set(0);
        counted.statusReads.set(0);
        io.live(true).get(0).run(); // a poll: still PENDING
        assertThat(counted.statusReads.get()).isEqualTo(1);
        assertThat(counted.finds.get())
                .as("a look at an unfinished batch reads its status only")
                .isZero();
        assertThat(waiters).noneMatch(CompletableFuture::isDone);

        deal(id);
        batches.signalled(); // /notify says DEALED: one look answers all hundred
        assertThat(counted.statusReads.get()).isEqualTo(2);
        assertThat(counted.finds.get()).as("the finished batch is read once").isEqualTo(1);
        assertThat(waiters).allMatch(f -> f.join().status() == BatchStatus.DEALED);
        assertThat(waiters.get(0).join()).isEqualTo(store.operations().find(id).orElseThrow());
        assertThat(batches.waiting()).isZero();
        assertThat(io.live(true)).as("the poller stops when nobody waits").isEmpty();
    }

    @Test
    void waitersOnSeveralBatchesCostOneStatusReadPerBatchAndTimeOutAlone() {
        BatchService batches = service(counting());
        BatchId first = batches.submit(ADD, "ops");
        BatchId second = batches.submit(List.of(new Operation.Delete<>(List.of("u9"))), "ops");
        List<CompletableFuture<BatchRecord>> onFirst = IntStream.range(0, 10)
                .mapToObj(i -> batches.await(first, Duration.ofMinutes(1)))
                .toList();
        CompletableFuture<BatchRecord> impatient = batches.await(second, Duration.ofSeconds(1));
        CompletableFuture<BatchRecord> patient = batches.await(second, Duration.ofMinutes(1));

        counted.finds.set(0);
        counted.statusReads.set(0);
        io.live(true).get(0).run();
        assertThat(counted.statusReads.get()).isEqualTo(2);
        assertThat(counted.finds.get()).isZero();

        // the one-second timeout passes: that waiter gets the current state, the others wait on
        io.live(false).stream()
                .filter(t -> t.delayMillis == 1000)
                .findFirst()
                .orElseThrow()
                .run();
        assertThat(impatient.join().status()).isEqualTo(BatchStatus.PENDING);
        assertThat(patient).isNotDone();
        assertThat(batches.waiting()).isEqualTo(11);

        deal(second);
        batches.signalled();
        assertThat(patient.join().status()).isEqualTo(BatchStatus.DEALED);
        assertThat(onFirst).noneMatch(CompletableFuture::isDone);
    }

    @Test
    void anUnknownBatchCannotBeAwaited() {
        BatchService batches = service(store);
        assertThatThrownBy(() -> batches.await(new BatchId(42), Duration.ofSeconds(1)))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("no batch 42");
    }

    @Test
    void theBatchAndItsAuditRowCommitTogether() {
        BatchId id = service(store).submit(ADD, "ops");
        assertThat(store.operations().find(id)).isPresent();
        assertThat(store.audit().forTarget(id.toString(), 10))
                .extracting(AuditEntry::actor, AuditEntry::action)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("ops", "batch.accepted"));
    }

    @Test
    void aFailureAfterTheAuditInsertRollsBackTheBatchAndTheAuditRow() {
        AuditLog audit = store.audit();
        AuditLog failingAfterInsert = new AuditLog() {
            @Override
            public void append(AuditEntry entry) {
                audit.append(entry);
                assertThat(audit.recent(1)).extracting(AuditEntry::id).containsExactly(entry.id());
                throw PidPoolException.unavailable("the database went away after the audit insert", null);
            }

            @Override
            public List<AuditEntry> recent(int limit) {
                return audit.recent(limit);
            }

            @Override
            public List<AuditEntry> forTarget(String target, int limit) {
                return audit.forTarget(target, limit);
            }

            @Override
            public List<AuditEntry> olderThan(long id, int limit) {
                return audit.olderThan(id, limit);
            }
        };
        BatchService batches = service(with(store, store.operations(), failingAfterInsert));

        assertThatThrownBy(() -> batches.submit(ADD, "ops")).hasMessageContaining("after the audit insert");
        assertThat(store.operations().recent(10)).isEmpty();
        assertThat(store.audit().recent(10)).isEmpty();
        assertThat(recorded)
                .as("nobody is woken for a batch that was not recorded")
                .isEmpty();
    }

    @Test
    void aRefusingCheckRecordsNothing() {
        BatchService batches = service(store);
        assertThatThrownBy(() -> batches.submit(ADD, "ops", ops -> {
                    throw PidPoolException.notFound("operations[0].module", "unknown module %s", FIN);
                }))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("unknown module");
        assertThat(store.operations().recent(10)).isEmpty();
        assertThat(store.audit().recent(10)).isEmpty();
        assertThat(recorded).isEmpty();
    }

    @Test
    void aBadBatchIsRefusedForWhatItIsEvenUnderAKeyUsedBefore() {
        BatchService batches = service(store);
        var key = new IdempotencyKey("k-1");
        BatchId first =
                batches.record(ADD, "ops", ops -> {}, key, "a".repeat(64)).id();
        List<Operation<String>> twice = List.of(
                new Operation.Add<>(FIN, List.of(new PidSpec<>("u2", "pw", 10, 0, Map.of()))),
                new Operation.ResetQuota<>(List.of("u2")));

        assertThatThrownBy(() -> batches.record(twice, "ops", ops -> {}, key, "b".repeat(64)))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.field()).isEqualTo("operations");
                });
        assertThat(store.operations().recent(10)).extracting(BatchRecord::id).containsExactly(first);
    }
}
