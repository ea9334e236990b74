package io.pidpool.core.singleflight;

import static io.pidpool.core.singleflight.FlightState.COMPETING;
import static io.pidpool.core.singleflight.FlightState.DONE;
import static io.pidpool.core.singleflight.FlightState.FAILED;
import static io.pidpool.core.singleflight.FlightState.IDLE;
import static io.pidpool.core.singleflight.FlightState.RUNNING;
import static io.pidpool.core.singleflight.FlightState.WAITING;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FlightStateTest {
    private static Set<FlightState> predecessors(FlightState s) {
        Set<FlightState> from = EnumSet.noneOf(FlightState.class);
        for (FlightState f : FlightState.values()) {
            if (s.canFollow(f)) {
                from.add(f);
            }
        }
        return from;
    }

    @Test
    void transitionTable() {
        assertThat(predecessors(IDLE)).isEmpty();
        assertThat(predecessors(COMPETING)).containsExactlyInAnyOrder(IDLE, WAITING, RUNNING);
        assertThat(predecessors(RUNNING)).containsExactly(COMPETING);
        assertThat(predecessors(WAITING)).containsExactly(COMPETING);
        assertThat(predecessors(DONE)).containsExactlyInAnyOrder(COMPETING, RUNNING);
        assertThat(predecessors(FAILED)).containsExactlyInAnyOrder(IDLE, COMPETING, RUNNING, WAITING);
    }

    @Test
    void finalStatesLeadNowhere() {
        for (FlightState to : FlightState.values()) {
            assertThat(to.canFollow(DONE)).isFalse();
            assertThat(to.canFollow(FAILED)).isFalse();
        }
    }
}
