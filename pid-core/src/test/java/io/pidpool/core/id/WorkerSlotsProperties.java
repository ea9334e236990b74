package io.pidpool.core.id;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class WorkerSlotsProperties {
    @Property(tries = 1000)
    void candidatesAreExactlyTheFreeSlotsWithAFreePreferredOneFirst(
            @ForAll Set<@IntRange(min = -3, max = 40) Integer> taken,
            @ForAll @IntRange(min = -1, max = 31) int preferred,
            @ForAll long seed) {
        OptionalInt pref = preferred < 0 ? OptionalInt.empty() : OptionalInt.of(preferred);

        List<Integer> candidates = WorkerSlots.candidates(taken, pref, new SplittableRandom(seed));

        Set<Integer> free = IntStream.range(0, WorkerSlots.COUNT)
                .filter(s -> !taken.contains(s))
                .boxed()
                .collect(Collectors.toSet());
        assertThat(new HashSet<>(candidates)).isEqualTo(free);
        assertThat(candidates).hasSameSizeAs(free);
        if (pref.isPresent() && free.contains(preferred)) {
            assertThat(candidates.get(0)).isEqualTo(preferred);
        }
    }
}
