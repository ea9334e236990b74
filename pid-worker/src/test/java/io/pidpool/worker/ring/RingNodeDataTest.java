package io.pidpool.worker.ring;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ring node's data: what is written, and how old and broken data is read. */
class RingNodeDataTest {
    @Test
    void writesTheTypesSortedOnALineOfTheirOwnAndReadsThemBack() {
        byte[] data = RingNodeData.encode(
                512, "app-1", Instant.parse("2026-11-21T19:00:00Z"), Set.of("usage.sync", "alert.webhook"));
        assertThat(new String(data, StandardCharsets.UTF_8))
                .isEqualTo("vnodes=512\nhost=app-1\nstartedAt=2026-11-21T19:00:00Z\ntypes=alert.webhook,usage.sync\n");
        assertThat(RingNodeData.decode(data))
                .isEqualTo(new GroupRing.Member(512, Set.of("alert.webhook", "usage.sync")));
    }

    @Test
    void aNodeWithoutATypesLineRunsNoType() {
        byte[] old = "vnodes=256\nhost=old\nstartedAt=2026-01-01T00:00:00Z\n".getBytes(StandardCharsets.UTF_8);
        assertThat(RingNodeData.decode(old)).isEqualTo(new GroupRing.Member(256, Set.of()));
    }

    @Test
    void brokenDataCountsAsOneVirtualNodeAndNoTypeAndBadTypesAreDropped() {
        assertThat(RingNodeData.decode(null)).isEqualTo(new GroupRing.Member(1, Set.of()));
        assertThat(RingNodeData.decode("vnodes=x\ntypes=".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(new GroupRing.Member(1, Set.of()));
        assertThat(RingNodeData.decode("vnodes=99999\ntypes=a, b ,,bad type,*".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(new GroupRing.Member(4096, Set.of("a", "b")));
    }
}
