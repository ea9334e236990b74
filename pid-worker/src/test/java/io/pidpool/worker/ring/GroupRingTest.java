package io.pidpool.worker.ring;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.ring.ConsistentHashRing;
import io.pidpool.core.ring.SlotRange;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Ownership per task type: the ring of a type is made of the members that run it. */
class GroupRingTest {
    private static final int V = 64;

    private static GroupRing.Member runs(String... types) {
        return new GroupRing.Member(V, Set.of(types));
    }

    @Test
    void eachTypeIsOwnedWithinTheMembersThatRunIt() {
        GroupRing g = GroupRing.of(Map.of("w1", runs("a", "b"), "w2", runs("a"), "w3", runs("a", "b")));
        ConsistentHashRing everyone = ConsistentHashRing.of(List.of("w1", "w2", "w3"), V);
        ConsistentHashRing bRing = ConsistentHashRing.of(List.of("w1", "w3"), V);

        assertThat(g.all()).isEqualTo(everyone);
        assertThat(g.ringOf("a")).isEqualTo(everyone);
        assertThat(g.ringOf("b")).isEqualTo(bRing);
        SplittableRandom random = new SplittableRandom(42);
        for (int i = 0; i < 10_000; i++) {
            long slot = random.nextLong(ConsistentHashRing.SLOT_COUNT);
            assertThat(g.ownerOf("a", slot)).isEqualTo(everyone.ownerOf(slot));
            assertThat(g.ownerOf("b", slot)).isEqualTo(bRing.ownerOf(slot)).isNotEqualTo(java.util.Optional.of("w2"));
        }
        assertThat(g.types()).containsExactly("a", "b");

        // a member's selection: one entry per ring; types not in its handlers are not asked for
        assertThat(g.rangesOf("w1", Set.of("a", "b")))
                .containsExactly(
                        Map.entry(Set.of("a"), everyone.rangesOf("w1")), Map.entry(Set.of("b"), bRing.rangesOf("w1")));
        assertThat(g.rangesOf("w2", Set.of("a"))).containsExactly(Map.entry(Set.of("a"), everyone.rangesOf("w2")));
        assertThat(g.rangesOf("w1", Set.of("a"))).containsOnlyKeys(Set.of("a"));
        // every slot of b is covered exactly once by the b members' ranges
        long covered = g.rangesOf("w1", Set.of("b")).get(Set.of("b")).stream()
                        .mapToLong(SlotRange::size)
                        .sum()
                + g.rangesOf("w3", Set.of("b")).get(Set.of("b")).stream()
                        .mapToLong(SlotRange::size)
                        .sum();
        assertThat(covered).isEqualTo(ConsistentHashRing.SLOT_COUNT);
    }

    @Test
    void typesRunByTheSameMembersShareOneRing() {
        GroupRing g = GroupRing.of(Map.of("w1", runs("a", "b", "c"), "w2", runs("a", "b"), "w3", runs("a", "b")));
        assertThat(g.rangesOf("w1", Set.of("a", "b", "c")))
                .containsExactly(
                        Map.entry(Set.of("a", "b"), g.all().rangesOf("w1")),
                        Map.entry(Set.of("c"), List.of(SlotRange.all())));
    }

    @Test
    void aTypeNoMemberRunsHasNoOwner() {
        GroupRing g = GroupRing.of(Map.of("w1", runs("a"), "w2", runs("a")));
        assertThat(g.runs("c")).isFalse();
        assertThat(g.ringOf("c").isEmpty()).isTrue();
        assertThat(g.ownerOf("c", 12345)).isEmpty();
        assertThat(g.rangesOf("w1", Set.of("c"))).isEmpty();
        assertThat(g.runs("a")).isTrue();
        assertThat(GroupRing.empty().ownerOf("a", 0)).isEmpty();
    }

    @Test
    void aMemberWithoutTypesIsInTheGroupButOwnsNoTask() {
        // a node written before nodes carried a types line
        GroupRing g = GroupRing.of(Map.of("old", new GroupRing.Member(V, Set.of()), "w2", runs("a")));
        assertThat(g.all().members()).containsOnlyKeys("old", "w2");
        assertThat(g.ringOf("a").members()).containsOnlyKeys("w2");
        assertThat(g.ownerOf("a", 7)).contains("w2");
        assertThat(g.ownerOf("b", 7)).isEmpty();
        assertThat(g.rangesOf("old", Set.of("a"))).isEmpty();
        assertThat(g.rangesOf("w2", Set.of("a"))).containsExactly(Map.entry(Set.of("a"), List.of(SlotRange.all())));
        assertThat(g.reporter())
                .as("the smallest id among members that run something")
                .contains("w2");
    }

    @Test
    void anUntypedRingLetsEveryMemberRunEveryType() {
        ConsistentHashRing ring = ConsistentHashRing.of(List.of("w1", "w2"), V);
        GroupRing g = GroupRing.untyped(ring);
        assertThat(g.ringOf("anything")).isEqualTo(ring);
        assertThat(g.runs("anything")).isTrue();
        assertThat(g.rangesOf("w1", Set.of("x", "y")))
                .containsExactly(Map.entry(Set.of("x", "y"), ring.rangesOf("w1")));
        assertThat(g.reporter()).contains("w1");
        assertThat(g).isEqualTo(GroupRing.untyped(ConsistentHashRing.of(List.of("w2", "w1"), V)));
    }

    @Test
    void aMemberNamingATypeAndOneRunningAnyShareTheTypeRing() {
        GroupRing g = GroupRing.of(Map.of("w1", runs("a"), "w2", runs(GroupRing.ANY_TYPE)));
        assertThat(g.ringOf("a").members()).containsOnlyKeys("w1", "w2");
        assertThat(g.ringOf("b").members()).containsOnlyKeys("w2");
    }
}
