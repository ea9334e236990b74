package io.pidpool.core.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConsistentHashRingTest {
    @Test
    void anEmptyRingOwnsNothing() {
        ConsistentHashRing ring = ConsistentHashRing.empty();
        assertThat(ring.ownerOf(0)).isEmpty();
        assertThat(ring.ranges()).isEmpty();
        assertThat(ring.rangesOf("a")).isEmpty();
        assertThat(ring.isEmpty()).isTrue();
    }

    @Test
    void oneMemberOwnsTheWholeSpaceAsOneMergedRange() {
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("solo"), 1);
        assertThat(ring.rangesOf("solo")).containsExactly(SlotRange.all());
        assertThat(ring.shareOf("solo")).isEqualTo(1.0);
    }

    @Test
    void aPointOwnsTheArcThatEndsAtIt() {
        // the worker at 300 of {200, 300, 500, 800} handles [200, 300)
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("a", "b", "c", "d"), 8);
        for (String m : ring.members().keySet()) {
            for (int i = 0; i < 8; i++) {
                long p = ConsistentHashRing.pointOf(m, i);
                assertThat(ring.ownerOf(p == 0 ? ConsistentHashRing.SLOT_COUNT - 1 : p - 1))
                        .contains(m);
                assertThat(ring.ownerOf(p)).isNotEmpty();
            }
        }
    }

    @Test
    void theRingPlacesExactlyThePublishedPoints() {
        // the constructor hashes in place; it must agree with pointOf for multi-digit indexes too
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("m-1", "z"), 1200);
        for (String m : List.of("m-1", "z")) {
            for (int i : new int[] {0, 9, 10, 99, 100, 999, 1000, 1199}) {
                long p = ConsistentHashRing.pointOf(m, i);
                assertThat(ring.ownerOf(p == 0 ? ConsistentHashRing.SLOT_COUNT - 1 : p - 1))
                        .as("%s#%d", m, i)
                        .contains(m);
            }
        }
    }

    @Test
    void theSmallestPointOwnsTheWrapAroundArc() {
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("a", "b", "c"), 4);
        List<OwnedRange> ranges = ring.ranges();
        OwnedRange first = ranges.get(0);
        OwnedRange last = ranges.get(ranges.size() - 1);
        assertThat(first.range().start()).isZero();
        assertThat(last.range().end()).isEqualTo(ConsistentHashRing.SLOT_COUNT);
        assertThat(first.owner()).isEqualTo(last.owner());
        assertThat(ring.ownerOf(ConsistentHashRing.SLOT_COUNT - 1)).contains(first.owner());
    }

    @Test
    void diffOfAddingAMemberMovesRangesOnlyToIt() {
        ConsistentHashRing before = ConsistentHashRing.of(List.of("a", "b", "c"), 16);
        ConsistentHashRing after = before.withMember("d", 16);
        List<RangeMove> moves = ConsistentHashRing.diff(before, after);
        assertThat(moves).isNotEmpty().allSatisfy(m -> assertThat(m.to()).contains("d"));
        long moved = moves.stream().mapToLong(m -> m.range().size()).sum();
        assertThat((double) moved / ConsistentHashRing.SLOT_COUNT).isEqualTo(after.shareOf("d"));
    }

    @Test
    void diffFromAndToTheEmptyRing() {
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("a"), 2);
        assertThat(ConsistentHashRing.diff(ConsistentHashRing.empty(), ring))
                .extracting(RangeMove::from, RangeMove::to)
                .containsOnly(org.assertj.core.groups.Tuple.tuple(Optional.empty(), Optional.of("a")));
        assertThat(ConsistentHashRing.diff(ring, ring)).isEmpty();
    }

    @Test
    void perMemberVirtualNodeCountsActAsWeights() {
        ConsistentHashRing ring = ConsistentHashRing.of(Map.of("heavy", 1024, "light", 256));
        assertThat(ring.shareOf("heavy")).isBetween(0.7, 0.9);
    }

    @Test
    void badInputIsRejectedWithTheField() {
        assertThatThrownBy(() -> ConsistentHashRing.of(List.of("a"), 0))
                .isInstanceOfSatisfying(PidPoolException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                    assertThat(e.field()).isEqualTo("virtualNodes");
                });
        assertThatThrownBy(() -> ConsistentHashRing.of(List.of("a/b"), 4))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("member"));
        assertThatThrownBy(() -> ConsistentHashRing.empty().ownerOf(ConsistentHashRing.SLOT_COUNT))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("slot"));
        assertThatThrownBy(() -> new SlotRange(5, 5)).isInstanceOf(PidPoolException.class);
    }
}
