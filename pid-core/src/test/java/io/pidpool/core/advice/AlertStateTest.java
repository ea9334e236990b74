package io.pidpool.core.advice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.core.error.PidPoolException;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AlertStateTest {
    @Test
    void anAlertOpensOnceAndResolvesOnceForGood() {
        assertThat(AlertState.OPEN.canFollow(null)).isTrue();
        assertThat(AlertState.OPEN.canFollow(AlertState.OPEN)).isFalse();
        assertThat(AlertState.OPEN.canFollow(AlertState.RESOLVED)).isFalse();
        assertThat(AlertState.RESOLVED.canFollow(AlertState.OPEN)).isTrue();
        assertThat(AlertState.RESOLVED.canFollow(null)).isFalse();
        assertThat(AlertState.RESOLVED.canFollow(AlertState.RESOLVED)).isFalse();
        assertThat(AlertState.RESOLVED.isFinal()).isTrue();
        assertThat(AlertState.OPEN.isFinal()).isFalse();
    }

    @Test
    void aResolvedAlertCannotBeResolvedOrSeenAgain() {
        Instant t0 = Instant.parse("2026-11-16T08:00:00Z");
        Alert alert = new Alert("PID_COOLDOWN:u1", AlertKind.PID_COOLDOWN, Severity.WARNING, "u1", "cooldown", t0);
        StoredAlert resolved = StoredAlert.opened(1, alert).resolved(t0.plusSeconds(1));

        assertThatThrownBy(() -> resolved.resolved(t0.plusSeconds(2)))
                .isInstanceOf(PidPoolException.class)
                .hasMessageContaining("from RESOLVED to RESOLVED");
        assertThatThrownBy(() -> resolved.seenAgain(alert, t0.plusSeconds(2))).isInstanceOf(PidPoolException.class);
        assertThatThrownBy(() -> new StoredAlert(2, alert, AlertState.OPEN, 1, t0, Optional.of(t0)))
                .isInstanceOf(PidPoolException.class);
    }
}
