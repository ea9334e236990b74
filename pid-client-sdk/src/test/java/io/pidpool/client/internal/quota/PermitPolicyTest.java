package io.pidpool.client.internal.quota;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.client.internal.quota.PermitPolicy.Candidate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PermitPolicyTest {
    @Test
    void mostRemainingFirstPutsUnknownThenLargestHints() {
        PermitPolicy policy = PermitPolicy.mostRemainingFirst();
        List<Candidate> in =
                List.of(new Candidate("a", 5), new Candidate("b", -1), new Candidate("c", 50), new Candidate("d", 7));

        List<String> order = policy.order(in, 3).stream().map(Candidate::pid).toList();

        assertThat(order).containsExactly("b", "c", "d", "a");
    }

    @Test
    void mostRemainingFirstSpreadsTiesRoundRobin() {
        PermitPolicy policy = PermitPolicy.mostRemainingFirst();
        List<Candidate> in = List.of(new Candidate("a", 9), new Candidate("b", 9), new Candidate("c", 9));
        Map<String, Integer> firsts = new HashMap<>();

        for (int i = 0; i < 300; i++) {
            firsts.merge(policy.order(in, 1).get(0).pid(), 1, Integer::sum);
        }

        assertThat(firsts).containsOnly(Map.entry("a", 100), Map.entry("b", 100), Map.entry("c", 100));
    }

    @Test
    void leastRemainingFirstDrainsOnePidFirst() {
        List<Candidate> in = List.of(new Candidate("a", 5), new Candidate("b", -1), new Candidate("c", 2));

        assertThat(PermitPolicy.leastRemainingFirst().order(in, 1).stream().map(Candidate::pid))
                .containsExactly("c", "a", "b");
    }
}
