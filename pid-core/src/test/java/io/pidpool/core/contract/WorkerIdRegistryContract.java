package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.id.WorkerSlots;
import io.pidpool.core.id.WorkerSlotsExhaustedException;
import io.pidpool.core.port.WorkerIdRegistry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link WorkerIdRegistry} promises (the {@code /worker-ids/<n>} slots). Run by
 * the in-memory fake in pid-core ({@code InMemoryWorkerIdRegistryTest}) and by the ZooKeeper adapter
 * on a real ZooKeeper ({@code io.pidpool.client.internal.ids.CuratorWorkerIdRegistryIT} in pid-client-sdk).
 *
 * <p>All participants made by {@link #newParticipant} within one test share one namespace (one
 * {@code /worker-ids} directory), and every test starts from an empty one.
 */
public abstract class WorkerIdRegistryContract {
    /** How long a test waits for an asynchronous loss notification or a freed slot. */
    protected static final long WAIT_SECONDS = 20;

    private final List<WorkerIdRegistry> participants = new ArrayList<>();

    /**
     * A new participant (its own session) in this test's namespace. The owner token is unique per
     * call.
     */
    protected abstract WorkerIdRegistry createParticipant(String owner);

    /**
     * Ends the participant's session as a crash would (ZooKeeper: session expiry) and returns once
     * the server has dropped its slot node. The loss listener may be told later, on its own thread.
     */
    protected abstract void loseSession(WorkerIdRegistry participant);

    protected final WorkerIdRegistry newParticipant(String owner) {
        WorkerIdRegistry registry = createParticipant(owner);
        participants.add(registry);
        return registry;
    }

    @AfterEach
    void closeParticipants() {
        for (WorkerIdRegistry registry : participants) {
            registry.close();
        }
        participants.clear();
    }

    private static final WorkerIdRegistry.LossListener IGNORE = slot -> {};

    @Test
    void aSlotIsWithinRangeAndVisibleToEveryone() {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");

        WorkerSlot slot = a.acquire(OptionalInt.empty(), IGNORE);

        assertThat(slot.workerId()).isBetween(0, WorkerSlots.COUNT - 1);
        assertThat(slot.owner()).isEqualTo("owner-a");
        assertThat(a.current()).contains(slot);
        assertThat(b.current()).isEmpty();
        assertThat(b.takenSlots()).containsExactly(slot.workerId());
    }

    @Test
    void acquireIsIdempotentPerParticipant() {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerSlot first = a.acquire(OptionalInt.empty(), IGNORE);
        int other = (first.workerId() + 1) % WorkerSlots.COUNT;

        WorkerSlot again = a.acquire(OptionalInt.of(other), IGNORE);

        assertThat(again).isEqualTo(first);
        assertThat(a.takenSlots()).containsExactly(first.workerId());
    }

    @Test
    void aFreePreferredSlotIsTakenAndATakenOneIsNot() {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");

        assertThat(a.acquire(OptionalInt.of(17), IGNORE).workerId()).isEqualTo(17);
        int bSlot = b.acquire(OptionalInt.of(17), IGNORE).workerId();

        assertThat(bSlot).isNotEqualTo(17).isBetween(0, WorkerSlots.COUNT - 1);
    }

    @Test
    void thirtyTwoParticipantsGetThirtyTwoSlotsAndTheThirtyThirdIsToldClearly() {
        Set<Integer> slots = new HashSet<>();
        List<WorkerIdRegistry> holders = new ArrayList<>();
        for (int i = 0; i < WorkerSlots.COUNT; i++) {
            WorkerIdRegistry p = newParticipant("owner-" + i);
            holders.add(p);
            slots.add(p.acquire(OptionalInt.empty(), IGNORE).workerId());
        }
        assertThat(slots).hasSize(WorkerSlots.COUNT);
        WorkerIdRegistry late = newParticipant("owner-late");

        assertThatThrownBy(() -> late.acquire(OptionalInt.empty(), IGNORE))
                .isInstanceOf(WorkerSlotsExhaustedException.class)
                .hasMessageContaining("all 32 worker-id slots 0..31 are taken")
                .satisfies(e ->
                        assertThat(((PidPoolException) e).code().retryable()).isTrue());
        assertThat(late.current()).isEmpty();

        WorkerIdRegistry leaving = holders.get(5);
        int freed = leaving.current().orElseThrow().workerId();
        leaving.release();
        assertThat(late.acquire(OptionalInt.empty(), IGNORE).workerId()).isEqualTo(freed);
    }

    @Test
    void releaseFreesTheSlotAndIsIdempotent() {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");
        int slot = a.acquire(OptionalInt.of(3), IGNORE).workerId();

        a.release();
        a.release();

        assertThat(a.current()).isEmpty();
        assertThat(b.acquire(OptionalInt.of(slot), IGNORE).workerId()).isEqualTo(slot);
    }

    @Test
    void releaseDoesNotCallTheListener() {
        WorkerIdRegistry a = newParticipant("owner-a");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        a.acquire(OptionalInt.empty(), lost::complete);

        a.release();

        assertThat(lost).isNotDone();
    }

    @Test
    void aLostSessionTellsTheListenerAndFreesTheSlot() throws Exception {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        WorkerSlot slot = a.acquire(OptionalInt.of(9), lost::complete);

        loseSession(a);

        assertThat(lost.get(WAIT_SECONDS, TimeUnit.SECONDS)).isEqualTo(slot);
        assertThat(a.current()).isEmpty();
        assertThat(b.acquire(OptionalInt.of(9), IGNORE).workerId()).isEqualTo(9);
    }

    @Test
    void aLateReleaseAfterALossNeverFreesTheNewHoldersSlot() throws Exception {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");
        WorkerIdRegistry c = newParticipant("owner-c");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        a.acquire(OptionalInt.of(4), lost::complete);
        loseSession(a);
        lost.get(WAIT_SECONDS, TimeUnit.SECONDS);
        assertThat(b.acquire(OptionalInt.of(4), IGNORE).workerId()).isEqualTo(4);

        a.release();

        assertThat(c.takenSlots()).contains(4);
        assertThat(c.acquire(OptionalInt.of(4), IGNORE).workerId()).isNotEqualTo(4);
        assertThat(b.current().orElseThrow().workerId()).isEqualTo(4);
    }

    @Test
    void afterALossTheParticipantCanAcquireAgainPreferringItsOldSlot() throws Exception {
        WorkerIdRegistry a = newParticipant("owner-a");
        CompletableFuture<WorkerSlot> lost = new CompletableFuture<>();
        WorkerSlot before = a.acquire(OptionalInt.of(12), lost::complete);
        loseSession(a);
        lost.get(WAIT_SECONDS, TimeUnit.SECONDS);

        WorkerSlot after = a.acquire(OptionalInt.of(before.workerId()), IGNORE);

        assertThat(after.workerId()).isEqualTo(12);
        assertThat(a.current()).contains(after);
    }

    @Test
    void concurrentAcquiresNeverShareASlot() throws Exception {
        int n = 8;
        List<WorkerIdRegistry> ps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ps.add(newParticipant("racer-" + i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<WorkerSlot>> results = new ArrayList<>();
            for (WorkerIdRegistry p : ps) {
                // everyone prefers slot 0: the worst case for a create race
                results.add(pool.submit(() -> {
                    go.await();
                    return p.acquire(OptionalInt.of(0), IGNORE);
                }));
            }
            go.countDown();
            Set<Integer> slots = new HashSet<>();
            for (Future<WorkerSlot> f : results) {
                slots.add(f.get(WAIT_SECONDS, TimeUnit.SECONDS).workerId());
            }
            assertThat(slots).hasSize(n).contains(0);
            assertThat(ps.get(0).takenSlots()).isEqualTo(slots);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aPreferredSlotOutOfRangeIsRejectedAndChangesNothing() {
        WorkerIdRegistry a = newParticipant("owner-a");

        for (int bad : new int[] {-1, WorkerSlots.COUNT}) {
            assertThatThrownBy(() -> a.acquire(OptionalInt.of(bad), IGNORE))
                    .isInstanceOf(PidPoolException.class)
                    .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                    .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("workerId"));
        }
        assertThat(a.current()).isEmpty();
        assertThat(a.takenSlots()).isEmpty();
    }

    @Test
    void closeReleasesAndForbidsFurtherUse() {
        WorkerIdRegistry a = newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");
        a.acquire(OptionalInt.of(30), IGNORE);

        a.close();
        a.close();

        assertThat(b.takenSlots()).doesNotContain(30);
        assertThatThrownBy(() -> a.acquire(OptionalInt.empty(), IGNORE))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }
}
