package io.pidpool.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PidStateTest {
    @Test
    void theLegalEdgesAreExactlyTheTable() {
        record Edge(PidState from, PidState to) {}
        Set<Edge> legal = Set.of(
                new Edge(null, PidState.ADDING),
                new Edge(PidState.ADDING, PidState.ADDING), // re-stamped by a new leader
                new Edge(PidState.DELETING, PidState.DELETING), // re-stamped by a new leader
                new Edge(PidState.ADDING, PidState.ADDED),
                new Edge(PidState.ADDED, PidState.UPDATING),
                new Edge(PidState.UPDATED, PidState.UPDATING),
                new Edge(PidState.UPDATING, PidState.UPDATING),
                new Edge(PidState.UPDATING, PidState.UPDATED),
                new Edge(PidState.ADDING, PidState.DELETING),
                new Edge(PidState.ADDED, PidState.DELETING),
                new Edge(PidState.UPDATING, PidState.DELETING),
                new Edge(PidState.UPDATED, PidState.DELETING),
                new Edge(PidState.DELETING, PidState.DELETED),
                // voluntary release on the SDK's close()
                new Edge(PidState.ADDING, PidState.DELETED),
                new Edge(PidState.ADDED, PidState.DELETED),
                new Edge(PidState.UPDATING, PidState.DELETED),
                new Edge(PidState.UPDATED, PidState.DELETED));
        var froms = new java.util.ArrayList<PidState>(EnumSet.allOf(PidState.class));
        froms.add(null);
        for (PidState from : froms) {
            for (PidState to : PidState.values()) {
                assertThat(to.canFollow(from)).as("%s -> %s", from, to).isEqualTo(legal.contains(new Edge(from, to)));
            }
        }
    }

    @Test
    void anIllegalEdgeSaysWhatItWas() {
        assertThatThrownBy(() -> PidState.ADDED.assertCanFollow(PidState.DELETING))
                .isInstanceOf(PidPoolException.class)
                .hasMessage("PID node cannot go from DELETING to ADDED")
                .satisfies(e -> assertThat(((PidPoolException) e).code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    }

    @Test
    void everyInstructionHasItsAnswer() {
        assertThat(PidState.ADDING.ack()).isEqualTo(PidState.ADDED);
        assertThat(PidState.UPDATING.ack()).isEqualTo(PidState.UPDATED);
        assertThat(PidState.DELETING.ack()).isEqualTo(PidState.DELETED);
        for (PidState s : PidState.values()) {
            if (s.isInstruction()) {
                assertThat(s.ack().canFollow(s)).isTrue();
                assertThat(PidState.DELETED.canFollow(s)).isTrue();
            } else {
                assertThatThrownBy(s::ack).isInstanceOf(PidPoolException.class);
            }
        }
    }
}
