package org.apache.curator.framework.imps;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.Watcher;

/**
 * Faults of Curator itself, injected the way Curator's own tests do (this class sits in Curator's
 * package to reach the package-private hook; test code only).
 */
public final class CuratorFaults {
    private CuratorFaults() {}

    /**
     * What {@code CuratorFrameworkImpl.checkBackgroundRetry} does when a background operation runs out
     * of retries on a connection loss: {@code validateConnection(Disconnected)}, which posts SUSPENDED
     * unless the state is SUSPENDED or LOST already — also when the loss was on an earlier connection
     * and the client has connected again meanwhile (CURATOR-525). No RECONNECTED follows by itself.
     */
    public static void backgroundOperationGaveUpOnConnectionLoss(CuratorFramework client) {
        ((CuratorFrameworkImpl) client).validateConnection(Watcher.Event.KeeperState.Disconnected);
    }
}
