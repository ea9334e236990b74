package io.pidpool.client.internal;

import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Curator calls behind a client's registration and connection handling: reading the session,
 * creating the ephemeral instance node (blocking, on the state thread), removing a node a former
 * session left, ending a session, following the instance node, and the connection probe that works
 * around Curator's stale SUSPENDED. The decisions stay in {@link DefaultPidClient}; the protocol
 * simulation mirrors them (they block on ZooKeeper here, which virtual time cannot).
 *
 * <p>Concurrency: thread-safe; listeners run on Curator's threads.
 */
final class CuratorRegistrar {
    private static final Logger log = LoggerFactory.getLogger(CuratorRegistrar.class);

    /** The session the ZooKeeper client is on: its id and negotiated timeout. */
    record SessionInfo(long id, int negotiatedMs) {}

    private final CuratorFramework curator;
    private final String namespace;

    CuratorRegistrar(CuratorFramework curator, String namespace) {
        this.curator = curator;
        this.namespace = namespace;
    }

    /** The session the ZooKeeper client is on, 0 if it cannot tell. */
    long sessionId() {
        try {
            return curator.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    /** The connected session, or {@code null} while not connected (the next connection comes back). */
    SessionInfo connectedSession() throws Exception {
        if (!curator.getZookeeperClient().isConnected()) {
            return null;
        }
        ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
        return new SessionInfo(zk.getSessionId(), zk.getSessionTimeout());
    }

    /**
     * Creates the ephemeral instance node (parents as needed) and answers its owner. An existing node
     * counts (our own earlier attempt on this session whose reply was lost); {@code null} if it
     * vanished before it could be read.
     */
    Long createInstanceNode(String path, byte[] data) throws Exception {
        Stat stat = new Stat();
        try {
            curator.create()
                    .storingStatIn(stat)
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.EPHEMERAL)
                    .forPath(path, data);
        } catch (KeeperException.NodeExistsException e) {
            try {
                stat = curator.checkExists().forPath(path);
            } catch (Exception again) {
                stat = null;
            }
            if (stat == null) {
                return null;
            }
        }
        return stat.getEphemeralOwner();
    }

    /** Deletes {@code path} if {@code owner} still owns it (best effort). */
    void deleteIfOwnedBy(String path, long owner) {
        try {
            Stat stat = curator.checkExists().forPath(path);
            if (stat != null && stat.getEphemeralOwner() == owner) {
                curator.delete().withVersion(stat.getVersion()).forPath(path);
            }
        } catch (Exception e) {
            log.debug("Could not delete {}: {}", path, e.toString());
        }
    }

    /** Deletes {@code path} in the background; {@code done} runs when answered or not sent. */
    void delete(String path, Runnable done) {
        try {
            curator.delete().inBackground((client, event) -> done.run()).forPath(path);
        } catch (Exception e) {
            log.debug("Could not delete {}: {}", path, e.toString());
            done.run();
        }
    }

    /** Makes the ZooKeeper client drop {@code sessionId} so that Curator opens a new session. */
    void endSession(long sessionId) {
        try {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            if (zk.getSessionId() == sessionId) {
                zk.getTestable().injectSessionExpiration();
            }
        } catch (Exception e) {
            log.warn("Could not end session 0x{}: {}", Long.toHexString(sessionId), e.toString());
        }
    }

    /** Follows the instance node (Curator's single-node cache); close the result to stop. */
    AutoCloseable watchInstanceNode(String path, Consumer<byte[]> changed, Runnable deleted) {
        CuratorCache cache = CuratorCache.build(curator, path, CuratorCache.Options.SINGLE_NODE_CACHE);
        cache.listenable()
                .addListener(CuratorCacheListener.builder()
                        .forCreatesAndChanges((before, data) -> changed.accept(data.getData()))
                        .forDeletes(data -> deleted.run())
                        .build());
        cache.start();
        return cache::close;
    }

    /** Whether Curator's ZooKeeper client reports a live connection on {@code sessionId}. */
    boolean connectedOn(long sessionId) {
        try {
            return curator.getZookeeperClient().isConnected() && sessionId() == sessionId;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * Curator's connection-state thread: a SUSPENDED arrived although the ZooKeeper client is connected
     * on the same session. Curator posts SUSPENDED whenever a background operation gives up on a
     * connection loss, also when that loss was on the previous connection and the client has connected
     * again meanwhile (a race Curator knows, CURATOR-525; its fix covers a stale LOST only). No
     * RECONNECTED follows, because the ZooKeeper client never disconnects again, and after the session
     * timeout in SUSPENDED Curator injects a session expiration: a healthy session would be thrown away,
     * every PID revoked and the instance registered anew.
     *
     * <p>The SUSPENDED itself is handled as always (granting stopped, PIDs revoked): the client cannot
     * tell for sure that it is stale. To set Curator's state right, one server round trip proves the
     * connection in a way Curator sees: the reply to a watch removal notifies ZooKeeper's default
     * watcher (Curator's), with state SyncConnected, and Curator answers that with RECONNECTED, after
     * which the client takes the PIDs up again once a fresh reply renews the lease. The probe registers
     * an existence watch on a path nobody creates and removes it at once (no node is written). If the
     * connection really is down, the probe fails and Curator's own detection goes on.
     */
    void probeConnection(long sessionId) {
        log.warn(
                "Curator reports SUSPENDED while its ZooKeeper client is connected on session 0x{}"
                        + " (a background operation gave up on an earlier connection loss); probing the"
                        + " connection so that Curator does not expire a healthy session",
                Long.toHexString(sessionId));
        String probe = "/" + namespace + "/connection-probe-" + Long.toHexString(sessionId);
        try {
            ZooKeeper zk = curator.getZookeeperClient().getZooKeeper();
            zk.exists(
                    probe,
                    true,
                    (rc, path, ctx, stat) -> {
                        if (rc != Code.OK.intValue() && rc != Code.NONODE.intValue()) {
                            log.info("Connection probe not answered ({}); Curator's detection goes on", Code.get(rc));
                            return;
                        }
                        zk.removeAllWatches(
                                probe,
                                Watcher.WatcherType.Data,
                                false,
                                (rc2, path2, ctx2) -> log.info(
                                        "Connection probe on session 0x{}: {}",
                                        Long.toHexString(sessionId),
                                        Code.get(rc2)),
                                null);
                    },
                    null);
        } catch (Exception e) {
            log.info("Connection probe not sent: {}", e.toString());
        }
    }
}
