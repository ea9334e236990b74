package io.pidpool.client.internal.zk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pidpool.client.internal.ids.CuratorWorkerIdRegistry;
import io.pidpool.client.testing.TestZooKeeper;
import java.nio.charset.StandardCharsets;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.junit.jupiter.api.Test;

/** {@link ZkAuth} on a real ZooKeeper: what Curator creates, in and above the namespace. */
class ZkAuthIT {
    static CuratorFramework client(TestingServer zk, ZkAuth auth, String namespace) throws Exception {
        CuratorFrameworkFactory.Builder b = CuratorFrameworkFactory.builder()
                .connectString(zk.getConnectString())
                .retryPolicy(new RetryOneTime(100));
        if (namespace != null) {
            b.namespace(namespace);
        }
        CuratorFramework c = auth.configure(b, namespace == null ? "pidpool/blue" : namespace)
                .build();
        c.start();
        assertThat(c.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
        return c;
    }

    @Test
    void namespaceAndEverythingBelowCarryTheIdentityOnly() throws Exception {
        ZkAuth auth = ZkAuth.digest("pidpool:blue-secret");
        try (TestingServer zk = TestZooKeeper.start();
                CuratorFramework ns = client(zk, auth, "pidpool/blue");
                CuratorFramework raw = client(zk, auth, null);
                CuratorFramework outsider = client(zk, ZkAuth.none(), null)) {
            ns.create()
                    .creatingParentContainersIfNeeded()
                    .forPath("/modules/a/b", "x".getBytes(StandardCharsets.UTF_8));
            ns.createContainers("/worker-ids");
            for (String path : new String[] {
                "/pidpool/blue",
                "/pidpool/blue/modules",
                "/pidpool/blue/modules/a",
                "/pidpool/blue/modules/a/b",
                "/pidpool/blue/worker-ids"
            }) {
                assertThat(raw.getACL().forPath(path)).as(path).isEqualTo(auth.acl());
            }
            assertThat(raw.getACL().forPath("/pidpool"))
                    .containsExactlyInAnyOrder(
                            auth.acl().get(0),
                            new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.CREATE, ZooDefs.Ids.ANYONE_ID_UNSAFE));
            assertThatThrownBy(() -> outsider.getData().forPath("/pidpool/blue/modules/a/b"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThat(outsider.getChildren().forPath("/pidpool")).containsExactly("blue"); // names only
            assertThatThrownBy(() -> outsider.getChildren().forPath("/pidpool/blue"))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            assertThatThrownBy(() -> outsider.setData().forPath("/pidpool", new byte[] {1}))
                    .isInstanceOf(KeeperException.NoAuthException.class);
            // another cluster, another identity, beside it
            ZkAuth green = ZkAuth.digest("green:green-secret");
            try (CuratorFramework other = client(zk, green, "pidpool/green")) {
                other.create().creatingParentContainersIfNeeded().forPath("/x");
                assertThat(other.getACL().forPath("/")).isEqualTo(green.acl());
                assertThatThrownBy(() -> other.usingNamespace(null).getData().forPath("/pidpool/blue/modules/a/b"))
                        .isInstanceOf(KeeperException.NoAuthException.class);
            }
        }
    }

    @Test
    void workerIdSlotsMadeFirstOnAnEmptyEnsembleCarryTheIdentity() throws Exception {
        ZkAuth auth = ZkAuth.digest("pidpool:slot-secret");
        try (TestingServer zk = TestZooKeeper.start();
                CuratorWorkerIdRegistry registry = CuratorWorkerIdRegistry.builder()
                        .connectString(zk.getConnectString())
                        .cluster("blue")
                        .zkAuth(auth)
                        .build();
                CuratorFramework raw = client(zk, auth, null)) {
            int slot = registry.acquire(OptionalInt.empty(), slotLost -> {}).workerId();
            for (String path : new String[] {
                "/pidpool/blue",
                "/pidpool/blue/worker-ids",
                "/pidpool/blue/worker-ids/" + slot,
                "/pidpool/blue/worker-id-marks",
                "/pidpool/blue/worker-id-marks/" + slot
            }) {
                assertThat(raw.getACL().forPath(path)).as(path).isEqualTo(auth.acl());
            }
            assertThat(raw.getACL().forPath("/pidpool")).contains(auth.acl().get(0));
        }
    }
}
