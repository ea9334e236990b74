package io.pidpool.core.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.contract.WorkerIdRegistryContract;
import io.pidpool.core.id.WorkerSlot;
import io.pidpool.core.port.WorkerIdRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class InMemoryWorkerIdRegistryTest extends WorkerIdRegistryContract {
    private final InMemoryWorkerIdRegistry.Namespace namespace = new InMemoryWorkerIdRegistry.Namespace();
    private final SplittableRandom seeds = new SplittableRandom(42);

    @Override
    protected WorkerIdRegistry createParticipant(String owner) {
        return new InMemoryWorkerIdRegistry(namespace, owner, seeds.split());
    }

    @Override
    protected void loseSession(WorkerIdRegistry participant) {
        ((InMemoryWorkerIdRegistry) participant).loseSession();
    }

    @Test
    void aSuspendedParticipantIsToldAndGetsTheSameSlotBackWhileItsSessionLives() {
        InMemoryWorkerIdRegistry a = (InMemoryWorkerIdRegistry) newParticipant("owner-a");
        WorkerIdRegistry b = newParticipant("owner-b");
        List<WorkerSlot> lost = new ArrayList<>();
        WorkerSlot slot = a.acquire(OptionalInt.of(6), lost::add);

        a.suspend();

        assertThat(lost).containsExactly(slot);
        assertThat(a.current()).isEmpty();
        // the node survives a suspension: nobody else may take the slot meanwhile
        assertThat(b.acquire(OptionalInt.of(6), s -> {}).workerId()).isNotEqualTo(6);
        assertThat(a.acquire(OptionalInt.empty(), s -> {})).isEqualTo(slot);
    }

    @Test
    void aFailingListenerDoesNotBreakTheRegistry() {
        InMemoryWorkerIdRegistry a = (InMemoryWorkerIdRegistry) newParticipant("owner-a");
        a.acquire(OptionalInt.of(1), s -> {
            throw new IllegalStateException("listener bug");
        });

        a.loseSession();

        assertThat(a.current()).isEmpty();
        assertThat(a.acquire(OptionalInt.of(1), s -> {}).workerId()).isEqualTo(1);
    }
}
