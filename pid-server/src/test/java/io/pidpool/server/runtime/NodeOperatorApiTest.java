package io.pidpool.server.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleConfig;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidAvailability;
import io.pidpool.core.model.PidState;
import io.pidpool.server.http.OperatorApi;
import io.pidpool.server.http.OperatorApi.PidQuery;
import io.pidpool.server.leader.ReadModel;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The mapping from the leader's read model to the HTTP views, and PID paging. */
class NodeOperatorApiTest {
    static final ModuleKey FIN = ModuleKey.parse("fin#risk#scorer");

    @Test
    void clusterViewNamesTheLeaderAmongSortedMembers() {
        var view = NodeOperatorApi.clusterView(
                "blue", new ReadModel.Cluster("b-2", false, "a-1", new Epoch(7), List.of("b-2", "a-1"), true));
        assertThat(view)
                .isEqualTo(new OperatorApi.ClusterView(
                        "blue",
                        "b-2",
                        "a-1",
                        new Epoch(7),
                        List.of(new OperatorApi.Member("a-1", true), new OperatorApi.Member("b-2", false))));
    }

    @Test
    void noLeaderIsNull() {
        var view = NodeOperatorApi.clusterView(
                "blue", new ReadModel.Cluster("b-2", false, "", Epoch.NONE, List.of("b-2"), true));
        assertThat(view.leader()).isNull();
        assertThat(view.members()).containsExactly(new OperatorApi.Member("b-2", false));
    }

    @Test
    void moduleViewCarriesConfigCountsAndInstances() {
        var module = new ReadModel.Module(
                FIN,
                new ModuleConfig(FIN, 4, 200_000, 0, Map.of()),
                10,
                9,
                7,
                List.of(new ReadModel.Instance(InstanceId.of("h1-1a"), 0x1aL, "h1", 2, true, 7, 1)));
        assertThat(NodeOperatorApi.moduleView(module))
                .isEqualTo(new OperatorApi.ModuleView(
                        FIN,
                        4,
                        200_000,
                        10,
                        9,
                        7,
                        List.of(new OperatorApi.InstanceView(InstanceId.of("h1-1a"), "h1", 2, true, 7, 1))));
    }

    static List<ReadModel.Pid> pids(int n) {
        return IntStream.rangeClosed(1, n)
                .mapToObj(i -> new ReadModel.Pid(
                        "u%02d".formatted(i),
                        FIN,
                        i % 3 == 0 ? PidAvailability.COOLDOWN : PidAvailability.ACTIVE,
                        100,
                        5,
                        i % 2 == 0 ? InstanceId.of("h1") : null,
                        i % 2 == 0 ? PidState.ADDED : null,
                        ""))
                .toList();
    }

    @Test
    void pagesWalkEveryPidOnceInIdOrder() {
        List<ReadModel.Pid> all = pids(10);
        List<String> seen = new java.util.ArrayList<>();
        String after = null;
        int pages = 0;
        do {
            var page = NodeOperatorApi.page(all, new PidQuery(null, null, null, after, 4));
            page.pids().forEach(p -> seen.add(p.pid().id()));
            after = page.next();
            pages++;
        } while (after != null && pages < 10);
        assertThat(pages).isEqualTo(3);
        assertThat(seen)
                .containsExactlyElementsOf(all.stream().map(ReadModel.Pid::id).toList());
    }

    @Test
    void exactlyFullLastPageHasNoNext() {
        var page = NodeOperatorApi.page(pids(4), new PidQuery(null, null, null, null, 4));
        assertThat(page.pids()).hasSize(4);
        assertThat(page.next()).isNull();
    }

    @Test
    void filtersByStatusAndMapsEveryField() {
        var page = NodeOperatorApi.page(pids(10), new PidQuery(null, null, PidAvailability.COOLDOWN, null, 100));
        assertThat(page.pids()).extracting(p -> p.pid().id()).containsExactly("u03", "u06", "u09");
        assertThat(page.pids().get(1))
                .isEqualTo(new OperatorApi.PidView(new ReadModel.Pid(
                        "u06", FIN, PidAvailability.COOLDOWN, 100, 5, InstanceId.of("h1"), PidState.ADDED, "")));
    }
}
