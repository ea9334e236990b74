package io.pidpool.server.config;

/**
 * The leader's account-health knobs.
 *
 * @param cooldownSeconds how long a PID is handed to nobody after its holder reported a login failure
 *     or conflict, or after it failed to be taken up several times in a row (default 600); env {@code
 *     PIDPOOL_LEADER_COOLDOWN_SECONDS}
 */
public record LeaderConfig(long cooldownSeconds) {
    public static final long DEFAULT_COOLDOWN_SECONDS = 600;
    public static final long MAX_COOLDOWN_SECONDS = 30L * 24 * 3600;

    public static LeaderConfig defaults() {
        return new LeaderConfig(DEFAULT_COOLDOWN_SECONDS);
    }
}
