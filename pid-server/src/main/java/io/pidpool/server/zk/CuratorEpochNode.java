package io.pidpool.server.zk;

import io.pidpool.core.error.PidPoolException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * {@link EpochNode} over Curator: blocking calls, so every stage it returns is already complete (the
 * bump runs on the calling thread, as a term start on the serial executor expects).
 */
public final class CuratorEpochNode implements EpochNode {
    private final CuratorFramework client;

    public CuratorEpochNode(CuratorFramework client) {
        this.client = client;
    }

    @Override
    public long sessionId() {
        return ZkSupport.sessionId(client);
    }

    @Override
    public CompletionStage<Versioned> read(String path) {
        try {
            Stat stat = new Stat();
            byte[] data = client.getData().storingStatIn(stat).forPath(path);
            return CompletableFuture.completedFuture(new Versioned(data, stat.getVersion()));
        } catch (KeeperException.NoNodeException e) {
            return CompletableFuture.completedFuture(null);
        } catch (KeeperException e) {
            return CompletableFuture.failedFuture(ZkErrors.translate(e, "bump " + path));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(PidPoolException.unavailable("bump " + path, e));
        }
    }

    @Override
    public CompletionStage<Integer> write(String path, byte[] data, int expectedVersion) {
        try {
            Stat after = client.setData().withVersion(expectedVersion).forPath(path, data);
            return CompletableFuture.completedFuture(after.getVersion());
        } catch (KeeperException.BadVersionException e) {
            return CompletableFuture.completedFuture(-1);
        } catch (KeeperException.NoNodeException e) {
            return CompletableFuture.completedFuture(-1); // deleted meanwhile: read it again
        } catch (KeeperException e) {
            return CompletableFuture.failedFuture(ZkErrors.translate(e, "bump " + path));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(PidPoolException.unavailable("bump " + path, e));
        }
    }

    @Override
    public CompletionStage<Boolean> create(String path, byte[] data) {
        try {
            client.create()
                    .creatingParentContainersIfNeeded()
                    .withMode(CreateMode.PERSISTENT)
                    .forPath(path, data);
            return CompletableFuture.completedFuture(true);
        } catch (KeeperException.NodeExistsException raced) {
            return CompletableFuture.completedFuture(false);
        } catch (KeeperException k) {
            return CompletableFuture.failedFuture(ZkErrors.translate(k, "create " + path));
        } catch (Exception other) {
            return CompletableFuture.failedFuture(PidPoolException.unavailable("create " + path, other));
        }
    }
}
