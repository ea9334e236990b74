package io.pidpool.core.advice;

import static io.pidpool.core.error.Preconditions.requireNonNull;

import java.time.Instant;
import java.util.List;

/**
 * The alerts that hold at {@code at} and how they differ from the ones open before, so the server
 * stores, lists and sends webhooks for changes only.
 *
 * @param open every alert that holds now (raised plus still open), by key
 * @param raised holding now, not open before: first seen now; notify
 * @param stillOpen holding now and open before: first seen as before, severity and message as now
 * @param resolved open before, no longer holding (as they were stored); notify and close
 */
public record AlertEvaluation(
        Instant at, List<Alert> open, List<Alert> raised, List<Alert> stillOpen, List<Alert> resolved) {
    public AlertEvaluation {
        requireNonNull(at, "at");
        open = List.copyOf(open);
        raised = List.copyOf(raised);
        stillOpen = List.copyOf(stillOpen);
        resolved = List.copyOf(resolved);
    }

    /** Whether anything was raised or resolved. */
    public boolean changed() {
        return !raised.isEmpty() || !resolved.isEmpty();
    }
}
