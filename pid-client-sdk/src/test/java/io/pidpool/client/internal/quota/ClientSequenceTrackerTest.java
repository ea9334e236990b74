package io.pidpool.client.internal.quota;

import static io.pidpool.client.internal.quota.ClientSequenceTracker.Verdict.DUPLICATE;
import static io.pidpool.client.internal.quota.ClientSequenceTracker.Verdict.NEW;
import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.ClientSequenceTracker.Gap;
import io.pidpool.client.internal.quota.ClientSequenceTracker.Source;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ClientSequenceTrackerTest {
    private final ClientSequenceTracker tracker = new ClientSequenceTracker();
    private final Source a = new Source(0, "inc1", "a");
    private final Source b = new Source(0, "inc1", "b");

    @Test
    void inOrderNumbersAreNewAndRepeatsAreDuplicates() {
        assertThat(tracker.accept(a, 1)).isEqualTo(NEW);
        assertThat(tracker.accept(a, 2)).isEqualTo(NEW);
        assertThat(tracker.accept(a, 2)).isEqualTo(DUPLICATE);
        assertThat(tracker.accept(a, 1)).isEqualTo(DUPLICATE);
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(2);
        assertThat(tracker.gaps()).isEmpty();
    }

    @Test
    void aJumpOpensAGapThatLateArrivalsFill() {
        tracker.accept(a, 1);
        tracker.accept(a, 5);

        assertThat(tracker.gaps()).containsExactly(new Gap(a, 2, 4));
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(1);

        assertThat(tracker.accept(a, 3)).isEqualTo(NEW);
        assertThat(tracker.gaps()).containsExactlyInAnyOrder(new Gap(a, 2, 2), new Gap(a, 4, 4));
        assertThat(tracker.accept(a, 3)).isEqualTo(DUPLICATE);
        assertThat(tracker.accept(a, 5)).isEqualTo(DUPLICATE);
        assertThat(tracker.accept(a, 2)).isEqualTo(NEW);
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(3);
        assertThat(tracker.accept(a, 4)).isEqualTo(NEW);
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(5);
        assertThat(tracker.gaps()).isEmpty();
    }

    @Test
    void sourcesAreIndependentAndANewIncarnationStartsAfresh() {
        tracker.accept(a, 1);
        tracker.accept(a, 2);
        Source reborn = new Source(0, "inc2", "a");

        assertThat(tracker.accept(b, 1)).isEqualTo(NEW);
        assertThat(tracker.accept(reborn, 1)).isEqualTo(NEW);
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(2);
    }

    @Test
    void theHeadsRevealALostLastNumber() {
        tracker.accept(a, 1);
        tracker.accept(a, 2);
        tracker.expectUpTo(a, 4);
        tracker.expectUpTo(b, 1);
        tracker.expectUpTo(a, 3); // older heads change nothing

        assertThat(tracker.gaps()).containsExactlyInAnyOrder(new Gap(a, 3, 4), new Gap(b, 1, 1));
        assertThat(tracker.accept(a, 4)).isEqualTo(NEW);
        assertThat(tracker.accept(a, 3)).isEqualTo(NEW);
        assertThat(tracker.contiguousUpTo(a)).isEqualTo(4);
    }

    @Test
    void restoreResumesFromAStoredMark() {
        tracker.restore(a, 10);

        assertThat(tracker.accept(a, 10)).isEqualTo(DUPLICATE);
        assertThat(tracker.accept(a, 12)).isEqualTo(NEW);
        assertThat(tracker.gaps()).containsExactly(new Gap(a, 11, 11));
    }

    @Test
    void anyArrivalOrderWithDuplicatesAcceptsEachNumberExactlyOnce() {
        Random random = new Random(2026);
        for (int round = 0; round < 200; round++) {
            ClientSequenceTracker t = new ClientSequenceTracker();
            int n = 1 + random.nextInt(60);
            List<Long> arrivals = new ArrayList<>();
            for (long s = 1; s <= n; s++) {
                arrivals.add(s);
                if (random.nextInt(4) == 0) {
                    arrivals.add(s); // a double delivery (the two paths)
                }
            }
            Collections.shuffle(arrivals, random);
            Set<Long> accepted = new HashSet<>();
            for (long s : arrivals) {
                if (t.accept(a, s) == NEW) {
                    assertThat(accepted.add(s))
                            .as("round %d: %d accepted twice", round, s)
                            .isTrue();
                }
            }
            assertThat(accepted).hasSize(n);
            assertThat(t.gaps()).isEmpty();
            assertThat(t.contiguousUpTo(a)).isEqualTo(n);
        }
    }
}
