package io.pidpool.it.zk;

import static org.awaitility.Awaitility.await;

import io.pidpool.core.protocol.ZkLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;

/**
 * The test's own eyes on ZooKeeper (its own session, namespace {@code pidpool/<cluster>}), to time
 * what the client and the leader do independently of both.
 *
 * <p>Thread-safe as far as Curator is; used from the test thread.
 */
public final class ZkProbe implements AutoCloseable {
    /**
     * When a node vanished, bracketed by two observations: it still existed when ZooKeeper answered a
     * request sent at {@code lastSeenSentNanos}, and was gone at {@code firstGoneNanos}. So the
     * deletion happened in {@code (lastSeenSentNanos, firstGoneNanos]}; {@code lastSeenSentNanos} is a
     * strict lower bound for arithmetic of the kind "nothing moved before deletion + grace".
     */
    public record Vanish(long lastSeenSentNanos, long firstGoneNanos) {}

    private final CuratorFramework zk;

    public ZkProbe(String connectString, String cluster) {
        zk = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .namespace(new ZkLayout(cluster).namespace())
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(10_000)
                .retryPolicy(new RetryNTimes(20, 100))
                .build();
        zk.start();
        try {
            if (!zk.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("probe cannot reach ZooKeeper at " + connectString);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public boolean exists(String path) {
        try {
            return zk.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new IllegalStateException("probe: checkExists " + path + " failed", e);
        }
    }

    /**
     * Polls {@code path} every 5 ms until it is gone (at most {@code atMost}) and brackets the
     * deletion. Start it before the deletion can happen: if the node is already gone at the first
     * look there is no lower bound, and this method throws.
     */
    public Vanish awaitGone(String path, Duration atMost) {
        AtomicLong lastSeenSent = new AtomicLong(Long.MIN_VALUE);
        AtomicLong firstGone = new AtomicLong();
        await("node " + path + " gone")
                .atMost(atMost)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(5))
                .until(() -> {
                    long sent = System.nanoTime();
                    if (exists(path)) {
                        lastSeenSent.set(sent);
                        return false;
                    }
                    firstGone.set(System.nanoTime());
                    return true;
                });
        if (lastSeenSent.get() == Long.MIN_VALUE) {
            throw new IllegalStateException(path + " was already gone when the probe started");
        }
        return new Vanish(lastSeenSent.get(), firstGone.get());
    }

    @Override
    public void close() {
        zk.close();
    }
}
