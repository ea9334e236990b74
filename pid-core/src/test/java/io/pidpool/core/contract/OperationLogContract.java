package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.BatchId;
import io.pidpool.core.model.BatchStatus;
import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.IdempotencyKey;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.Operation;
import io.pidpool.core.model.OperationBatch;
import io.pidpool.core.model.OperationResult;
import io.pidpool.core.model.OperationType;
import io.pidpool.core.model.PidSpec;
import io.pidpool.core.model.SealedSecret;
import io.pidpool.core.port.BatchKey;
import io.pidpool.core.port.BatchRecord;
import io.pidpool.core.port.OperationLog;
import io.pidpool.core.port.PendingEffect;
import io.pidpool.core.port.StorageLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** What every {@link OperationLog} does. */
public abstract class OperationLogContract extends RepositoryContract {
    /** A stand-in sealer: reversible, so the test can tell the plain text never reached the store. */
    private static final Function<String, SealedSecret> SEALER = plain ->
            new SealedSecret("k7", new StringBuilder(plain).reverse().toString().getBytes(StandardCharsets.UTF_8));

    private OperationLog log() {
        return repos.operations();
    }

    private BatchRecord everyKind(long id) {
        var ops = List.<Operation<String>>of(
                new Operation.Add<>(
                        FIN,
                        List.of(
                                new PidSpec<>("a1", "pw-one", 100, 5, Map.of("region", "east")),
                                new PidSpec<>("a2", "pw-two", 0, 0, Map.of()))),
                new Operation.Update<>(List.of(new PidSpec<>("u1", "new-pw", 300, 0, Map.of("k", "v=1&2")))),
                new Operation.Delete<>(List.of("d1", "d2")),
                new Operation.Migrate<>(List.of("m1"), OPS),
                new Operation.ResetQuota<>(List.of("r1", "r2", "r3")),
                new Operation.SetServers<>(ModuleKey.parse("hr#pay#roll"), 5, 70_000));
        return BatchRecord.pending(OperationBatch.pending(new BatchId(id), ops, "alice", clock.instant()), SEALER);
    }

    private BatchRecord simple(long id) {
        return BatchRecord.pending(
                new BatchId(id),
                List.of(new Operation.Delete<>(List.of("x" + id)), new Operation.ResetQuota<>(List.of("y" + id))),
                "bob",
                clock.instant());
    }

    private static List<OperationResult> twoResults() {
        return List.of(OperationResult.ok(0), OperationResult.failed(1, "PID y is unknown"));
    }

    @Test
    void appendThenFindRoundTripsEveryOperationKindWithSealedSecrets() {
        BatchRecord batch = everyKind(1001);

        log().append(batch);

        BatchRecord stored = log().find(new BatchId(1001)).orElseThrow();
        assertThat(stored).isEqualTo(batch);
        assertThat(stored.createdAt()).isEqualTo(Instant.parse("2025-07-09T08:00:00.123Z"));
        var add = (Operation.Add<SealedSecret>) stored.operations().get(0);
        assertThat(add.pids())
                .extracting(PidSpec<SealedSecret>::secret)
                .containsExactly(SEALER.apply("pw-one"), SEALER.apply("pw-two"));
        assertThat(log().find(new BatchId(1002))).isEmpty();
    }

    @Test
    void aDuplicateBatchIdIsAConflictAndTheFirstStays() {
        log().append(simple(7));

        var e = expectError(ErrorCode.CONFLICT, "id", () -> log().append(everyKind(7)));

        assertThat(e.getMessage()).contains("7");
        assertThat(log().find(new BatchId(7))).contains(simple(7));
    }

    // ---- idempotency keys

    private static final String FP1 = "1".repeat(64);
    private static final String FP2 = "2".repeat(64);

    private static BatchKey keyOf(BatchRecord batch, String key, String fingerprint) {
        return new BatchKey(batch.requestedBy(), new IdempotencyKey(key), fingerprint, batch.id());
    }

    @Test
    void aBatchIsStoredTogetherWithItsIdempotencyKey() {
        BatchRecord batch = simple(21);

        log().append(batch, keyOf(batch, "job-42:attempt", FP1));

        assertThat(log().find(batch.id())).contains(batch);
        assertThat(log().findKey("bob", new IdempotencyKey("job-42:attempt")))
                .contains(keyOf(batch, "job-42:attempt", FP1));
        assertThat(log().findKey("alice", new IdempotencyKey("job-42:attempt"))).isEmpty();
        assertThat(log().findKey("bob", new IdempotencyKey("job-43"))).isEmpty();
    }

    @Test
    void aKeyUsedBeforeByThePrincipalIsAConflictAndNothingIsStored() {
        BatchRecord first = simple(22);
        log().append(first, keyOf(first, "k1", FP1));
        BatchRecord second = simple(23);

        expectError(ErrorCode.CONFLICT, "Idempotency-Key", () -> log().append(second, keyOf(second, "k1", FP2)));

        assertThat(log().find(second.id())).isEmpty();
        assertThat(log().findKey("bob", new IdempotencyKey("k1"))).contains(keyOf(first, "k1", FP1));
        // another principal's same key is another key
        BatchRecord alices = everyKind(24);
        log().append(alices, keyOf(alices, "k1", FP2));
        assertThat(log().findKey("alice", new IdempotencyKey("k1")).map(BatchKey::batch))
                .contains(alices.id());
    }

    @Test
    void aKeyMustNameItsOwnBatchAndBeWellFormed() {
        BatchRecord batch = simple(25);

        expectError(ErrorCode.INVALID_ARGUMENT, "Idempotency-Key", () -> log().append(
                        batch, new BatchKey("bob", new IdempotencyKey("k"), FP1, new BatchId(26))));
        expectError(ErrorCode.INVALID_ARGUMENT, "Idempotency-Key", () -> log().append(
                        batch, new BatchKey("alice", new IdempotencyKey("k"), FP1, batch.id())));
        expectError(ErrorCode.INVALID_ARGUMENT, "Idempotency-Key", () -> new IdempotencyKey("x".repeat(129)));
        expectError(ErrorCode.INVALID_ARGUMENT, "Idempotency-Key", () -> new IdempotencyKey("a b"));
        expectError(ErrorCode.INVALID_ARGUMENT, "Idempotency-Key", () -> new IdempotencyKey(""));

        assertThat(log().find(batch.id())).isEmpty();
    }

    @Test
    void twoThreadsAppendingWithOneKeyStoreOneBatch() throws Exception {
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 10; round++) {
                String key = "race-" + round;
                BatchRecord a = simple(1000 + 2L * round);
                BatchRecord b = simple(1001 + 2L * round);
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                List<java.util.concurrent.Future<String>> outcomes = new java.util.ArrayList<>();
                for (BatchRecord batch : List.of(a, b)) {
                    outcomes.add(pool.submit(() -> {
                        start.await();
                        try {
                            log().append(batch, keyOf(batch, key, FP1));
                            return "stored";
                        } catch (io.pidpool.core.error.PidPoolException e) {
                            return e.code() + " " + e.field();
                        }
                    }));
                }
                List<String> results = new java.util.ArrayList<>();
                for (var outcome : outcomes) {
                    results.add(outcome.get(30, java.util.concurrent.TimeUnit.SECONDS));
                }

                assertThat(results)
                        .as("round %d", round)
                        .containsExactlyInAnyOrder("stored", "CONFLICT Idempotency-Key");
                BatchId winner = log().findKey("bob", new IdempotencyKey(key))
                        .orElseThrow()
                        .batch();
                BatchId loser = winner.equals(a.id()) ? b.id() : a.id();
                assertThat(log().find(winner)).isPresent();
                assertThat(log().find(loser)).as("round %d", round).isEmpty();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void onlyANewPendingBatchCanBeAppended() {
        BatchRecord dealing = simple(8).transition(BatchStatus.DEALING, List.of(), E1, clock.instant());

        expectError(ErrorCode.INVALID_ARGUMENT, "status", () -> log().append(dealing));

        assertThat(log().find(new BatchId(8))).isEmpty();
    }

    /** Batches 10..50 out of order: 10 DEALED, 20 and 30 PENDING, 40 DEALING, 50 FAILED. */
    private void appendInEveryStatus() {
        for (long id : new long[] {30, 10, 40, 20, 50}) {
            log().append(simple(id));
        }
        log().markDealing(new BatchId(40), E1);
        log().markDealing(new BatchId(10), E1);
        log().finish(new BatchId(10), BatchStatus.DEALED, twoResults(), E1);
        log().markDealing(new BatchId(50), E1);
        log().finish(new BatchId(50), BatchStatus.FAILED, twoResults(), E1);
    }

    @Test
    void unfinishedBatchesComeOldestFirst() {
        appendInEveryStatus();

        assertThat(log().findUnfinished(10))
                .extracting(b -> b.id().value(), BatchRecord::status)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(20L, BatchStatus.PENDING),
                        org.assertj.core.groups.Tuple.tuple(30L, BatchStatus.PENDING),
                        org.assertj.core.groups.Tuple.tuple(40L, BatchStatus.DEALING));
        assertThat(log().findUnfinished(2)).extracting(b -> b.id().value()).containsExactly(20L, 30L);
        expectError(ErrorCode.INVALID_ARGUMENT, "limit", () -> log().findUnfinished(0));
        assertThat(log().findUnfinishedIds(10))
                .as("the same batches, only their ids")
                .containsExactly(new BatchId(20), new BatchId(30), new BatchId(40));
        assertThat(log().findUnfinishedIds(2)).containsExactly(new BatchId(20), new BatchId(30));
        expectError(ErrorCode.INVALID_ARGUMENT, "limit", () -> log().findUnfinishedIds(0));
    }

    @Test
    void aStatusReadsAsTheWholeBatchHasIt() {
        appendInEveryStatus();

        for (long id : new long[] {10, 20, 30, 40, 50}) {
            assertThat(log().findStatus(new BatchId(id)))
                    .as("the status of batch %d, as find has it", id)
                    .contains(log().find(new BatchId(id)).orElseThrow().status());
        }
        assertThat(log().findStatus(new BatchId(20))).contains(BatchStatus.PENDING);
        assertThat(log().findStatus(new BatchId(40))).contains(BatchStatus.DEALING);
        assertThat(log().findStatus(new BatchId(10))).contains(BatchStatus.DEALED);
        assertThat(log().findStatus(new BatchId(50))).contains(BatchStatus.FAILED);
        assertThat(log().findStatus(new BatchId(99))).isEmpty();
    }

    @Test
    void pendingEffectsAreTheUnfinishedOperationsWithOnlyTheAskedPids() {
        log().append(everyKind(10)); // finished below: no effect
        log().markDealing(new BatchId(10), E1);
        log().finish(
                        new BatchId(10),
                        BatchStatus.DEALED,
                        java.util.stream.IntStream.range(0, 6)
                                .mapToObj(OperationResult::ok)
                                .toList(),
                        E1);
        log().append(everyKind(20));
        log().append(simple(30));
        log().markDealing(new BatchId(30), E1);
        log().append(BatchRecord.pending(
                new BatchId(40), List.of(new Operation.Migrate<>(List.of("a2", "zz"), FIN)), "carol", clock.instant()));
        Set<String> asked = Set.of("a2", "d2", "m1", "x30", "r2", "nobody");

        List<PendingEffect> effects = log().pendingEffects(asked, 10);

        ModuleKey hr = ModuleKey.parse("hr#pay#roll");
        assertThat(effects)
                .containsExactly(
                        new PendingEffect(OperationType.ADD, FIN, List.of("a2")),
                        new PendingEffect(OperationType.UPDATE, null, List.of()),
                        new PendingEffect(OperationType.DELETE, null, List.of("d2")),
                        new PendingEffect(OperationType.MIGRATE, OPS, List.of("m1")),
                        new PendingEffect(OperationType.RESET_QUOTA, null, List.of("r2")),
                        new PendingEffect(OperationType.SET_SERVERS, hr, List.of()),
                        new PendingEffect(OperationType.DELETE, null, List.of("x30")),
                        new PendingEffect(OperationType.RESET_QUOTA, null, List.of()),
                        new PendingEffect(OperationType.MIGRATE, FIN, List.of("a2")));
        assertThat(log().pendingEffects(asked, 2)).hasSize(8); // batches 20 and 30
        assertThat(log().pendingEffects(Set.of(), 10))
                .allSatisfy(e -> assertThat(e.pidIds()).isEmpty());
        expectError(ErrorCode.INVALID_ARGUMENT, "limit", () -> log().pendingEffects(asked, 0));
    }

    @Test
    void recentBatchesComeNewestFirstWhateverTheirStatus() {
        for (long id : new long[] {30, 10, 40, 20}) {
            log().append(simple(id));
        }
        log().markDealing(new BatchId(40), E1);
        log().finish(new BatchId(40), BatchStatus.DEALED, twoResults(), E1);

        assertThat(log().recent(10)).extracting(b -> b.id().value()).containsExactly(40L, 30L, 20L, 10L);
        assertThat(log().recent(2))
                .extracting(b -> b.id().value(), BatchRecord::status)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(40L, BatchStatus.DEALED),
                        org.assertj.core.groups.Tuple.tuple(30L, BatchStatus.PENDING));
        assertThat(log().recent(2).get(0).results()).hasSize(2);
        expectError(ErrorCode.INVALID_ARGUMENT, "limit", () -> log().recent(0));
    }

    @Test
    void dealingThenDealedStoresStatusEpochTimeAndResults() {
        log().append(everyKind(1));
        clock.advance(Duration.ofSeconds(5));

        BatchRecord dealing = log().markDealing(new BatchId(1), E2);
        clock.advance(Duration.ofMillis(1500));
        var results = List.of(
                OperationResult.ok(0),
                OperationResult.ok(1),
                OperationResult.failed(2, "PID d2 does not exist"),
                OperationResult.ok(3),
                OperationResult.ok(4),
                OperationResult.ok(5));
        BatchRecord dealed = log().finish(new BatchId(1), BatchStatus.DEALED, results, E2);

        assertThat(dealing.status()).isEqualTo(BatchStatus.DEALING);
        assertThat(dealing.epoch()).isEqualTo(E2);
        assertThat(dealing.updatedAt()).isEqualTo(Instant.parse("2025-07-09T08:00:05.123Z"));
        assertThat(dealed.results()).isEqualTo(results);
        assertThat(dealed.updatedAt()).isEqualTo(Instant.parse("2025-07-09T08:00:06.623Z"));
        assertThat(log().find(new BatchId(1))).contains(dealed);
    }

    @Test
    void invalidTransitionsAreRejectedAndChangeNothing() {
        log().append(simple(1));

        expectError(ErrorCode.ILLEGAL_STATE, null, () -> log().transition(
                        new BatchId(1), BatchStatus.PENDING, List.of(), E1));
        log().markDealing(new BatchId(1), E1);
        BatchRecord dealed = log().finish(new BatchId(1), BatchStatus.DEALED, twoResults(), E1);
        expectError(ErrorCode.ILLEGAL_STATE, null, () -> log().markDealing(new BatchId(1), E1));
        expectError(ErrorCode.ILLEGAL_STATE, null, () -> log().finish(
                        new BatchId(1), BatchStatus.FAILED, twoResults(), E1));

        assertThat(log().find(new BatchId(1))).contains(dealed);
    }

    @Test
    void resultsMustMatchTheOperationsAndAWrongSetChangesNothing() {
        log().append(simple(1));
        BatchRecord dealing = log().markDealing(new BatchId(1), E1);

        expectError(ErrorCode.INVALID_ARGUMENT, "results", () -> log().finish(
                        new BatchId(1), BatchStatus.DEALED, List.of(OperationResult.ok(0)), E1));
        expectError(ErrorCode.INVALID_ARGUMENT, "results", () -> log().finish(
                        new BatchId(1), BatchStatus.DEALED, List.of(OperationResult.ok(1), OperationResult.ok(0)), E1));
        expectError(ErrorCode.INVALID_ARGUMENT, "results", () -> log().transition(
                        new BatchId(1), BatchStatus.DEALING, twoResults(), E1));

        assertThat(log().find(new BatchId(1))).contains(dealing);
    }

    @Test
    void aDeposedLeaderIsFencedAndTheSuccessorTakesOver() {
        log().append(simple(1));
        log().markDealing(new BatchId(1), E1);

        BatchRecord takenOver = log().markDealing(new BatchId(1), E2);
        expectError(
                ErrorCode.FENCED, "epoch", () -> log().finish(new BatchId(1), BatchStatus.DEALED, twoResults(), E1));

        assertThat(log().find(new BatchId(1))).contains(takenOver);
        assertThat(log().finish(new BatchId(1), BatchStatus.FAILED, twoResults(), E3)
                        .epoch())
                .isEqualTo(E3);
    }

    @Test
    void aTransitionFromAHeldCopyChecksTheStoredStatusAndEpochFirst() {
        log().append(simple(1));
        BatchRecord pending = log().find(new BatchId(1)).orElseThrow();
        BatchRecord dealing = log().transition(pending, BatchStatus.DEALING, List.of(), E1);
        assertThat(log().find(new BatchId(1))).contains(dealing);

        // a stale copy: the batch moved on (another epoch took it over) since it was read
        BatchRecord takenOver = log().markDealing(new BatchId(1), E2);
        expectError(ErrorCode.FENCED, "epoch", () -> log().transition(dealing, BatchStatus.DEALED, twoResults(), E1));
        expectError(ErrorCode.ILLEGAL_STATE, null, () -> log().transition(pending, BatchStatus.PENDING, List.of(), E2));
        assertThat(log().find(new BatchId(1))).contains(takenOver);

        BatchRecord dealed = log().transition(takenOver, BatchStatus.DEALED, twoResults(), E2);
        assertThat(log().find(new BatchId(1))).contains(dealed);
        expectError(
                ErrorCode.ILLEGAL_STATE, null, () -> log().transition(takenOver, BatchStatus.FAILED, twoResults(), E2));
        expectError(ErrorCode.NOT_FOUND, "id", () -> log().transition(simple(404), BatchStatus.DEALING, List.of(), E1));
    }

    @Test
    void unknownBatchIsNotFound() {
        expectError(ErrorCode.NOT_FOUND, "id", () -> log().markDealing(new BatchId(404), E1));
    }

    @Test
    void longResultMessagesAreCut() {
        log().append(simple(1));
        log().markDealing(new BatchId(1), Epoch.NONE);

        BatchRecord done = log().finish(
                        new BatchId(1),
                        BatchStatus.FAILED,
                        List.of(OperationResult.failed(0, "é".repeat(5000)), OperationResult.ok(1)),
                        Epoch.NONE);

        assertThat(done.results().get(0).message()).hasSize(StorageLimits.MAX_RESULT_MESSAGE);
        assertThat(log().find(new BatchId(1))).contains(done);
    }
}
