package io.pidpool.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The revocation reasons the tracker and the dispatcher give map to their metric causes. */
class RevokeCauseTest {
    @Test
    void theTrackersReasonsMapToTheirCauses() {
        assertThat(RevokeCause.of(RevokeCause.CLOSING)).isEqualTo(RevokeCause.CLOSE);
        assertThat(RevokeCause.of(RevokeCause.NOT_ALIVE)).isEqualTo(RevokeCause.SESSION);
        assertThat(RevokeCause.of(RevokeCause.NODE_UNREADABLE)).isEqualTo(RevokeCause.UNREADABLE);
        assertThat(RevokeCause.of("onAssigned did not return within the callback deadline of 500 ms"))
                .isEqualTo(RevokeCause.DEADLINE);
        assertThat(RevokeCause.of("the leader asked for it (DELETING)")).isEqualTo(RevokeCause.LEADER);
        assertThat(RevokeCause.of("its node was deleted")).isEqualTo(RevokeCause.LEADER);
    }
}
