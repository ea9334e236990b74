package io.pidpool.server.leader;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the leader reports things an operator should look at (stuck instances, PIDs in cooldown,
 * brakes). The monitoring layer replaces the default, which logs.
 *
 * <p>Called from the leader's serial executor; implementations must not block.
 */
@FunctionalInterface
public interface AlertSink {
    void alert(String message);

    /**
     * The leader stopped seeing a condition it alerted once under {@code key} (e.g. {@code
     * signal:brake:<module>} when the mass-failure brake releases). Default: nothing.
     */
    default void cleared(String key) {}

    static AlertSink logging() {
        Logger log = LoggerFactory.getLogger(AlertSink.class);
        return message -> log.warn("{}", message);
    }
}
