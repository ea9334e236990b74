package io.pidpool.server.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SortedIdsTest {
    @Test
    void holdsAndIteratesExactlyWhatATreeSetWould() {
        Random random = new Random(7);
        for (int round = 0; round < 50; round++) {
            Set<String> tree = new TreeSet<>();
            int n = random.nextInt(300);
            while (tree.size() < n) {
                tree.add("p" + random.nextInt(10_000) + (random.nextBoolean() ? "x" : ""));
            }
            List<String> shuffled = new ArrayList<>(tree);
            java.util.Collections.shuffle(shuffled, random);
            Set<String> sorted = SortedIds.of(shuffled);
            assertThat(sorted).containsExactlyElementsOf(tree);
            assertThat(sorted).hasSameSizeAs(tree).isEqualTo(tree);
            assertThat(sorted.toArray(new String[0])).containsExactly(tree.toArray(new String[0]));
            for (int probe = 0; probe < 100; probe++) {
                String id = "p" + random.nextInt(10_000);
                assertThat(sorted.contains(id)).isEqualTo(tree.contains(id));
            }
            assertThat(sorted.contains(42)).isFalse();
        }
    }

    @Test
    void isReadOnly() {
        Set<String> sorted = SortedIds.of(List.of("b", "a"));
        assertThatThrownBy(() -> sorted.remove("a")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> sorted.add("c")).isInstanceOf(UnsupportedOperationException.class);
        assertThat(sorted).containsExactly("a", "b");
    }
}
