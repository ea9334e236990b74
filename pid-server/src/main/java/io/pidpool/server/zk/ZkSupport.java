package io.pidpool.server.zk;

import io.pidpool.core.error.PidPoolException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

/** Small bridges between Curator and the raw ZooKeeper handle the fenced writer and the scanner use. */
public final class ZkSupport {
    private ZkSupport() {}

    /** ZooKeeper's socket on Netty ({@link #memberClientConfig}), unless the JVM names another. */
    static final String NETTY_SOCKET = "org.apache.zookeeper.ClientCnxnSocketNetty";

    /**
     * The ZooKeeper client settings of a cluster member's session: the system properties as ZooKeeper
     * reads them, with the connection on Netty unless {@code zookeeper.clientCnxnSocket} names a
     * socket. The member's one session receives a notification for every acknowledgement of every
     * client (two per PID handed out); ZooKeeper's default NIO socket pays a selector wake-up and two
     * reads for each, Netty reads what arrived together at once (docs/benchmarks.md §4).
     */
    public static ZKClientConfig memberClientConfig() {
        ZKClientConfig config = new ZKClientConfig();
        if (System.getProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET) == null) {
            config.setProperty(ZKClientConfig.ZOOKEEPER_CLIENT_CNXN_SOCKET, NETTY_SOCKET);
        }
        return config;
    }

    /** The client's current ZooKeeper handle; {@link PidPoolException} UNAVAILABLE if there is none. */
    public static ZooKeeper zooKeeper(CuratorFramework client) {
        try {
            return client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw PidPoolException.unavailable("no ZooKeeper handle", e);
        }
    }

    public static long sessionId(CuratorFramework client) {
        return zooKeeper(client).getSessionId();
    }

    /** The NEGOTIATED session timeout of the client's current session (never the requested one). */
    public static Duration negotiatedSessionTimeout(CuratorFramework client) {
        return Duration.ofMillis(zooKeeper(client).getSessionTimeout());
    }

    /** The absolute path of {@code relative} under the client's namespace. */
    public static String absolute(String namespace, String relative) {
        return relative.equals("/") ? "/" + namespace : "/" + namespace + relative;
    }

    /**
     * {@code sync()}: afterwards, reads on this session see every write committed before the call.
     * Asynchronous.
     */
    public static CompletableFuture<Void> sync(CuratorFramework client, String relativePath) {
        var done = new CompletableFuture<Void>();
        try {
            zooKeeper(client)
                    .sync(
                            absolute(client.getNamespace(), relativePath),
                            (rc, path, ctx) -> {
                                if (rc == Code.OK.intValue()) {
                                    done.complete(null);
                                } else {
                                    done.completeExceptionally(ZkErrors.translate(rc, "sync " + relativePath));
                                }
                            },
                            null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Waits for a future of this package, translating timeouts and interrupts. */
    public static <T> T await(CompletableFuture<T> future, Duration timeout, String what) {
        try {
            return future.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw PidPoolException.unavailable(what + " interrupted", e);
        } catch (TimeoutException e) {
            throw PidPoolException.unavailable(what + " timed out after " + timeout, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PidPoolException p) {
                throw p;
            }
            throw PidPoolException.unavailable(what + " failed", e.getCause());
        }
    }
}
