package io.pidpool.core.contract;

import static org.assertj.core.api.Assertions.assertThat;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.model.Assignment;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.port.AssignmentRepository;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every {@link AssignmentRepository} does. */
public abstract class AssignmentRepositoryContract extends RepositoryContract {

    @BeforeEach
    void pidsInTwoModules() {
        givenModules(FIN, OPS);
        repos.pids().insertAll(List.of(pid("u1", FIN), pid("u2", FIN), pid("u3", FIN), pid("o1", OPS)));
    }

    private AssignmentRepository assignments() {
        return repos.assignments();
    }

    @Test
    void recordThenFindRoundTripsEveryField() {
        var a = new Assignment("u1", FIN, I1, PidState.ADDING, E2, 0x7fff_0000_1234L);

        assignments().record(a);

        assertThat(assignments().find("u1")).contains(a);
        assertThat(assignments().find("u2")).isEmpty();
    }

    @Test
    void theSameOrANewerEpochReplacesTheRow() {
        assignments().record(new Assignment("u1", FIN, I1, PidState.ADDING, E1, 7));
        assignments().record(new Assignment("u1", FIN, I1, PidState.ADDED, E1, 7));
        var moved = new Assignment("u1", FIN, I2, PidState.ADDING, E2, 9);

        assignments().record(moved);

        assertThat(assignments().find("u1")).contains(moved);
        assertThat(assignments().findAll()).containsExactly(moved);
    }

    @Test
    void anOlderEpochIsFencedAndNothingOfTheCallIsWritten() {
        var current = new Assignment("u1", FIN, I1, PidState.ADDED, E2, 7);
        assignments().record(current);

        var e = expectError(ErrorCode.FENCED, "epoch", () -> assignments()
                .recordAll(List.of(
                        new Assignment("u2", FIN, I2, PidState.ADDING, E1, 8),
                        new Assignment("u1", FIN, I2, PidState.ADDING, E1, 8))));

        assertThat(e.getMessage()).contains("u1");
        assertThat(assignments().findAll()).containsExactly(current);
    }

    @Test
    void unknownPidOrModuleIsNotFoundAndNothingIsWritten() {
        expectError(ErrorCode.NOT_FOUND, "pid.id", () -> assignments()
                .recordAll(List.of(
                        new Assignment("u1", FIN, I1, PidState.ADDING, E1, 1),
                        new Assignment("ghost", FIN, I1, PidState.ADDING, E1, 1))));
        expectError(ErrorCode.NOT_FOUND, "module", () -> assignments()
                .record(new Assignment("u1", ModuleKey.parse("no#such#module"), I1, PidState.ADDING, E1, 1)));
        expectError(ErrorCode.INVALID_ARGUMENT, "pid.id", () -> assignments()
                .recordAll(List.of(
                        new Assignment("u1", FIN, I1, PidState.ADDING, E1, 1),
                        new Assignment("u1", FIN, I2, PidState.ADDING, E1, 1))));

        assertThat(assignments().findAll()).isEmpty();
    }

    @Test
    void removeIsFencedAndSaysWhetherThereWasARow() {
        assignments().record(new Assignment("u1", FIN, I1, PidState.DELETED, E2, 7));

        expectError(ErrorCode.FENCED, "epoch", () -> assignments().remove("u1", E1));
        assertThat(assignments().find("u1")).isPresent();

        assertThat(assignments().remove("u1", E3)).isTrue();
        assertThat(assignments().remove("u1", E3)).isFalse();
        assertThat(assignments().find("u1")).isEmpty();
    }

    @Test
    void removeAllIsAllOrNoneAndCountsTheRowsThereWere() {
        assignments()
                .recordAll(List.of(
                        new Assignment("u1", FIN, I1, PidState.ADDED, E1, 1),
                        new Assignment("u2", FIN, I2, PidState.ADDED, E2, 2),
                        new Assignment("u3", FIN, I1, PidState.ADDED, E1, 1)));

        expectError(ErrorCode.FENCED, "epoch", () -> assignments().removeAll(List.of("u1", "u2", "u3"), E1));
        assertThat(assignments().findAll()).extracting(Assignment::pidId).containsExactly("u1", "u2", "u3");

        assertThat(assignments().removeAll(List.of("u1", "u2", "u9"), E2)).isEqualTo(2);
        assertThat(assignments().findAll()).extracting(Assignment::pidId).containsExactly("u3");
        assertThat(assignments().removeAll(List.of(), E2)).isZero();
    }

    @Test
    void queriesByModuleAndInstanceAreOrdered() {
        assignments()
                .recordAll(List.of(
                        new Assignment("u3", FIN, I1, PidState.ADDED, E1, 1),
                        new Assignment("u2", FIN, I2, PidState.ADDED, E1, 2),
                        new Assignment("u1", FIN, I1, PidState.UPDATING, E1, 1),
                        new Assignment("o1", OPS, I1, PidState.ADDED, E1, 3)));

        assertThat(assignments().findByModule(FIN))
                .extracting(Assignment::pidId)
                .containsExactly("u1", "u3", "u2");
        assertThat(assignments().findByInstance(FIN, I1))
                .extracting(Assignment::pidId)
                .containsExactly("u1", "u3");
        assertThat(assignments().findByInstance(OPS, I2)).isEmpty();
        assertThat(assignments().findAll()).extracting(Assignment::pidId).containsExactly("o1", "u1", "u2", "u3");
    }
}
