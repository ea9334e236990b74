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

/** Small bridges between Curator and the raw ZooKeeper handle the fenced writer and the scanner use. */
public final class ZkSupport {
    private ZkSupport() {}

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
