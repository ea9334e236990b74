package io.pidpool.worker.task;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.ErrorCode;
import io.pidpool.core.error.PidPoolException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TaskStatusTest {
    @Test
    void theLegalEdgesAreExactlyTheTable() {
        record Edge(TaskStatus from, TaskStatus to) {}
        Set<Edge> legal = Set.of(
                new Edge(null, TaskStatus.PENDING),
                new Edge(TaskStatus.PENDING, TaskStatus.RUNNING),
                new Edge(TaskStatus.RUNNING, TaskStatus.PENDING),
                new Edge(TaskStatus.RUNNING, TaskStatus.DONE),
                new Edge(TaskStatus.RUNNING, TaskStatus.FAILED));
        List<TaskStatus> froms = new ArrayList<>(Arrays.asList(TaskStatus.values()));
        froms.add(null);
        for (TaskStatus from : froms) {
            for (TaskStatus to : TaskStatus.values()) {
                assertThat(to.canFollow(from)).as("%s -> %s", from, to).isEqualTo(legal.contains(new Edge(from, to)));
            }
        }
        assertThatThrownBy(() -> TaskStatus.DONE.assertValidTransition(TaskStatus.PENDING))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
        assertThat(TaskStatus.DONE.isFinal()).isTrue();
        assertThat(TaskStatus.RUNNING.isFinal()).isFalse();
    }

    @Test
    void newTasksValidateTheirFields() {
        assertThatThrownBy(() -> NewTask.of("g/1", "t", "k", "{}"))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("group"));
        assertThatThrownBy(() -> NewTask.of("g", "bad type", "k", "{}"))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("type"));
        assertThatThrownBy(() -> NewTask.of("g", "t", "", "{}"))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("key"));
        assertThatThrownBy(() -> NewTask.of("g", "t", "k", "{}").withMaxAttempts(0))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("maxAttempts"));
        assertThatThrownBy(() -> NewTask.of("g", "t", "k", null))
                .isInstanceOfSatisfying(
                        PidPoolException.class, e -> assertThat(e.field()).isEqualTo("body"));
    }
}
