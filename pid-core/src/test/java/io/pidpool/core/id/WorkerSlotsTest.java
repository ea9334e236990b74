package io.pidpool.core.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class WorkerSlotsTest {
    private final SplittableRandom random = new SplittableRandom(7);

    @Test
    void aFreePreferredSlotComesFirst() {
        List<Integer> c = WorkerSlots.candidates(Set.of(0, 1, 2), OptionalInt.of(20), random);

        assertThat(c.get(0)).isEqualTo(20);
        assertThat(c).hasSize(29).doesNotContain(0, 1, 2).doesNotHaveDuplicates();
    }

    @Test
    void aTakenPreferredSlotIsNotOffered() {
        List<Integer> c = WorkerSlots.candidates(Set.of(20), OptionalInt.of(20), random);

        assertThat(c).hasSize(31).doesNotContain(20);
    }

    @Test
    void theOtherFreeSlotsComeInRandomOrderNotLowestFirst() {
        Set<Integer> firsts = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            firsts.add(WorkerSlots.pick(Set.of(), OptionalInt.empty(), random));
        }
        assertThat(firsts).hasSizeGreaterThan(10);
    }

    @Test
    void theOnlyFreeSlotIsPicked() {
        Set<Integer> taken = new HashSet<>();
        IntStream.range(0, 32).filter(i -> i != 13).forEach(taken::add);

        assertThat(WorkerSlots.pick(taken, OptionalInt.of(2), random)).isEqualTo(13);
    }

    @Test
    void exhaustionIsToldClearly() {
        Set<Integer> taken = new HashSet<>();
        IntStream.range(0, 32).forEach(taken::add);

        assertThat(WorkerSlots.candidates(taken, OptionalInt.empty(), random)).isEmpty();
        assertThatThrownBy(() -> WorkerSlots.pick(taken, OptionalInt.of(3), random))
                .isInstanceOf(WorkerSlotsExhaustedException.class)
                .hasMessage("all 32 worker-id slots 0..31 are taken")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.UNAVAILABLE));
    }

    @Test
    void strayNodesNeitherTakeNorFreeASlot() {
        List<Integer> c =
                WorkerSlots.candidates(java.util.Arrays.asList(-1, 32, 99, null, 5), OptionalInt.empty(), random);

        assertThat(c).hasSize(31).doesNotContain(5);
    }

    @Test
    void aPreferredSlotOutOfRangeIsInvalid() {
        assertThatThrownBy(() -> WorkerSlots.candidates(Set.of(), OptionalInt.of(32), random))
                .isInstanceOf(PidPoolException.class)
                .satisfies(e -> assertThat(((PidPoolException) e).field()).isEqualTo("workerId"));
    }

    @Test
    void nodeNamesParseOnlyAsPlainSlotNumbers() {
        assertThat(WorkerSlots.parse("0")).hasValue(0);
        assertThat(WorkerSlots.parse("31")).hasValue(31);
        for (String bad : new String[] {null, "", "32", "07", "-1", "x", "1a", "100", " 1"}) {
            assertThat(WorkerSlots.parse(bad)).as("'%s'", bad).isEmpty();
        }
    }

    @Test
    void aSlotRecordChecksItsRange() {
        assertThatThrownBy(() -> new WorkerSlot(32, "me")).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> new WorkerSlot(1, "no/slash")).isInstanceOf(PidPoolException.class);
        assertThat(new WorkerSlot(31, "me").workerId()).isEqualTo(31);
    }
}
