package io.pidpool.client;

import java.time.Duration;

/**
 * The client's current registration: which ZooKeeper session it runs on and the instance id derived
 * from it ({@code <prefix>-<session id in hex>}). A new session always means a new instance id.
 *
 * @param instanceId the name of this instance's ephemeral node under {@code /modules/<module>/}
 * @param sessionId the ZooKeeper session that owns the ephemeral node
 * @param sessionTimeout the negotiated session timeout T (not the requested one)
 * @param pidsPath the node under which the leader writes this instance's PIDs; empty until the
 *     leader has answered the registration
 */
public record Registration(String instanceId, long sessionId, Duration sessionTimeout, String pidsPath) {
    /** Whether the leader has answered: PIDs can arrive. */
    public boolean handshakeDone() {
        return !pidsPath.isEmpty();
    }
}
