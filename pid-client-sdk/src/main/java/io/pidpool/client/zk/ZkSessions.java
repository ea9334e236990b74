package io.pidpool.client.zk;

import static io.pidpool.core.error.Preconditions.requireArgument;

import java.time.Duration;

/** Bounds shared by every builder that opens a ZooKeeper session of its own. */
public final class ZkSessions {
    private ZkSessions() {}

    /**
     * {@code timeout} if it is a session timeout worth asking ZooKeeper for (100 ms .. 10 min).
     *
     * @throws io.pidpool.core.error.PidPoolException {@code INVALID_ARGUMENT} ({@code sessionTimeout})
     */
    public static Duration requireSessionTimeout(Duration timeout) {
        requireArgument(
                timeout != null && timeout.toMillis() >= 100 && timeout.toMillis() <= 600_000,
                "sessionTimeout",
                "sessionTimeout must be within 100 ms..10 min, was %s",
                timeout);
        return timeout;
    }
}
