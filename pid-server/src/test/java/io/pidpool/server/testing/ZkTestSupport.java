package io.pidpool.server.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

/** ZooKeeper tricks for tests. */
public final class ZkTestSupport {
    private ZkTestSupport() {}

    /**
     * Expires a client's session on the server, as a real expiry does: a second connection attaches
     * to the same session and closes it, so the server deletes its ephemeral nodes at once. (Curator's
     * {@code KillSession} only injects an expiry into the client; the server keeps the nodes.)
     */
    public static void expireOnServer(CuratorFramework client, String connectString) throws Exception {
        ZooKeeper victim = client.getZookeeperClient().getZooKeeper();
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(
                connectString,
                victim.getSessionTimeout(),
                event -> {
                    if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                        connected.countDown();
                    }
                },
                victim.getSessionId(),
                victim.getSessionPasswd());
        try {
            if (!connected.await(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("twin connection did not connect");
            }
        } finally {
            twin.close();
        }
    }

    /** A plain client of the test namespace, e.g. to play a rogue writer. */
    public static CuratorFramework client(String connectString, String namespace) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .namespace(namespace)
                .sessionTimeoutMs(2_000)
                .retryPolicy(new RetryOneTime(100))
                .build();
        client.start();
        if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("could not connect");
        }
        return client;
    }

    /** Closes the client's socket (same session) and waits until Curator reports it reconnected. */
    public static void interruptConnection(CuratorFramework curator) throws Exception {
        CountDownLatch reconnected = new CountDownLatch(1);
        ConnectionStateListener listener = (c, state) -> {
            if (state == ConnectionState.RECONNECTED) {
                reconnected.countDown();
            }
        };
        curator.getConnectionStateListenable().addListener(listener);
        try {
            curator.getZookeeperClient().getZooKeeper().getTestable().closeSocket();
            assertThat(reconnected.await(20, TimeUnit.SECONDS))
                    .as("reconnected")
                    .isTrue();
        } finally {
            curator.getConnectionStateListenable().removeListener(listener);
        }
    }
}
