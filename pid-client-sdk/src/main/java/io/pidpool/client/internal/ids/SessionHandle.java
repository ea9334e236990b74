package io.pidpool.client.internal.ids;

import io.pidpool.core.error.PidPoolException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooKeeper;

/**
 * The ZooKeeper handle of a participant's current session, taken from its Curator client. Writes
 * that depend on "this is still my slot" go through such a handle, never through Curator's retrying
 * API: a Curator retry may land on a newer session, while a handle whose session expired never sends
 * anything again. Thread-safe.
 */
final class SessionHandle {
    private final CuratorFramework curator;
    private final Duration operationTimeout;
    private final String slotsPath;

    SessionHandle(CuratorFramework curator, Duration operationTimeout, String slotsPath) {
        this.curator = curator;
        this.operationTimeout = operationTimeout;
        this.slotsPath = slotsPath;
    }

    /**
     * The handle of a connected session, waiting for one at most the operation timeout.
     *
     * @throws PidPoolException {@code UNAVAILABLE} when no session is connected in time
     */
    ZooKeeper connected() {
        try {
            if (!curator.blockUntilConnected((int) operationTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw PidPoolException.unavailable(
                        "no ZooKeeper connection within " + operationTimeout + " to take a worker id at " + slotsPath,
                        null);
            }
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            if (!zk.getState().isConnected()) {
                throw PidPoolException.unavailable("the ZooKeeper connection dropped while taking a worker id", null);
            }
            return zk;
        } catch (PidPoolException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable("interrupted while waiting for ZooKeeper", e);
        } catch (Exception e) {
            throw PidPoolException.unavailable("cannot reach ZooKeeper: " + e, e);
        }
    }

    /** The current handle, connected or not; {@code null} if Curator has none now. */
    ZooKeeper current() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * Whether Curator sees the connection up. (Curator's flag, not the handle's state: the handle
     * still says CONNECTED for a while after a disconnect, until it starts to reconnect.)
     */
    boolean isConnected() {
        return curator.getZookeeperClient().isConnected();
    }
}
