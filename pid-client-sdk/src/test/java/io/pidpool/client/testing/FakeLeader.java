package io.pidpool.client.testing;

import io.pidpool.core.model.Epoch;
import io.pidpool.core.model.InstanceId;
import io.pidpool.core.model.ModuleKey;
import io.pidpool.core.model.PidState;
import io.pidpool.core.protocol.InstanceNode;
import io.pidpool.core.protocol.PidNode;
import io.pidpool.core.protocol.PidNode.AccountPayload;
import io.pidpool.core.protocol.ZkLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * Plays the leader's side of docs/design.md §4 directly with Curator, so the SDK can be tested without
 * pid-server: bumps {@code /epoch}, answers a registration (creates {@code <instance>-pids} and sets
 * {@code pidsPath}), writes ADDING/UPDATING/DELETING nodes and reads the SDK's answers. Every write
 * is a multi-op that starts with {@code check(/epoch, version)}, as a real leader's.
 *
 * <p>No policy at all: each test decides what to write. Blocking calls; thread-safe as far as
 * Curator is (tests use it from one thread).
 */
public final class FakeLeader implements AutoCloseable {
    /** What the leader knows about one registered instance. */
    public record Instance(ModuleKey module, InstanceId id, long ownerSessionId, String path, String pidsPath) {}

    private final CuratorFramework zk;
    private final ZkLayout layout;
    private Epoch epoch = Epoch.NONE;
    private int epochVersion = -1;

    public FakeLeader(String connectString, String cluster) {
        this.layout = new ZkLayout(cluster);
        this.zk = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .namespace(layout.namespace())
                .sessionTimeoutMs(30_000)
                .connectionTimeoutMs(10_000)
                .retryPolicy(new RetryNTimes(20, 100))
                .build();
        zk.start();
        try {
            if (!zk.blockUntilConnected(10, TimeUnit.SECONDS)) {
                throw new IllegalStateException("fake leader cannot reach ZooKeeper at " + connectString);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        bumpEpoch();
    }

    public ZkLayout layout() {
        return layout;
    }

    /** The Curator client (namespaced), for tests that need a raw look. */
    public CuratorFramework curator() {
        return zk;
    }

    public Epoch epoch() {
        return epoch;
    }

    /** Becomes the leader of a new epoch (creates {@code /epoch} the first time). */
    public Epoch bumpEpoch() {
        return call(() -> {
            Stat stat = zk.checkExists().forPath(layout.epoch());
            if (stat == null) {
                zk.create().forPath(layout.epoch(), text(1));
                stat = zk.checkExists().forPath(layout.epoch());
                epoch = new Epoch(1);
            } else {
                long current = Long.parseLong(new String(zk.getData().forPath(layout.epoch()), StandardCharsets.UTF_8));
                Stat written = zk.setData().withVersion(stat.getVersion()).forPath(layout.epoch(), text(current + 1));
                stat = written;
                epoch = new Epoch(current + 1);
            }
            epochVersion = stat.getVersion();
            return epoch;
        });
    }

    /** Instance ids registered in {@code module} right now (ephemeral nodes, not the -pids nodes). */
    public List<String> instances(ModuleKey module) {
        return call(() -> {
            if (zk.checkExists().forPath(layout.module(module)) == null) {
                return List.of();
            }
            List<String> ids = new ArrayList<>();
            for (String child : zk.getChildren().forPath(layout.module(module))) {
                if (!ZkLayout.isPidsNodeName(child)) {
                    ids.add(child);
                }
            }
            return ids;
        });
    }

    /** The instance node's owner and data, if it exists. */
    public Optional<Instance> instance(ModuleKey module, String instanceId) {
        InstanceId id = InstanceId.of(instanceId);
        String path = layout.instance(module, id);
        return call(() -> {
            Stat stat = zk.checkExists().forPath(path);
            if (stat == null) {
                return Optional.empty();
            }
            return Optional.of(new Instance(module, id, stat.getEphemeralOwner(), path, layout.pids(module, id)));
        });
    }

    public Optional<InstanceNode> instanceData(Instance instance) {
        return call(() -> {
            try {
                return Optional.of(InstanceNode.decode(zk.getData().forPath(instance.path())));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
        });
    }

    /** Step 3: create {@code <instance>-pids} and write its path into the instance node (versioned). */
    public Instance handshake(Instance instance) {
        return call(() -> {
            Stat stat = new Stat();
            InstanceNode node =
                    InstanceNode.decode(zk.getData().storingStatIn(stat).forPath(instance.path()));
            List<CuratorOp> ops = new ArrayList<>();
            ops.add(checkEpoch());
            if (zk.checkExists().forPath(instance.pidsPath()) == null) {
                ops.add(zk.transactionOp()
                        .create()
                        .withMode(CreateMode.PERSISTENT)
                        .forPath(instance.pidsPath()));
            }
            ops.add(zk.transactionOp()
                    .setData()
                    .withVersion(stat.getVersion())
                    .forPath(
                            instance.path(),
                            node.withPidsPath(instance.pidsPath()).encode()));
            zk.transaction().forOperations(ops);
            return instance;
        });
    }

    public static AccountPayload account(String password, long monthlyQuota) {
        return account(password, monthlyQuota, Map.of());
    }

    public static AccountPayload account(String password, long monthlyQuota, Map<String, String> attributes) {
        return new AccountPayload(monthlyQuota, 0, TestSecrets.seal(password), attributes);
    }

    /** Step 5: an ADDING node for the instance's session, in the current epoch. */
    public void add(Instance instance, String pid, AccountPayload account) {
        write(instance, PidNode.instruction(pid, PidState.ADDING, epoch, instance.ownerSessionId(), account));
    }

    /** UPDATING in the current epoch (over whatever the node holds). */
    public void update(Instance instance, String pid, AccountPayload account) {
        write(instance, PidNode.instruction(pid, PidState.UPDATING, epoch, instance.ownerSessionId(), account));
    }

    /** DELETING in the current epoch, keeping the node's account. */
    public void delete(Instance instance, String pid) {
        PidNode node = read(instance, pid).orElseThrow();
        write(instance, PidNode.instruction(pid, PidState.DELETING, epoch, instance.ownerSessionId(), node.account()));
    }

    /** Creates or overwrites (unversioned) a PID node with exactly {@code node}, fenced by the epoch. */
    public void write(Instance instance, PidNode node) {
        writeRaw(instance, node.pidId(), node.encode());
    }

    /** Creates or overwrites a PID node with arbitrary bytes (e.g. garbage), fenced by the epoch. */
    public void writeRaw(Instance instance, String pid, byte[] data) {
        String path = instance.pidsPath() + "/" + pid;
        call(() -> {
            CuratorOp op = zk.checkExists().forPath(path) == null
                    ? zk.transactionOp()
                            .create()
                            .withMode(CreateMode.PERSISTENT)
                            .forPath(path, data)
                    : zk.transactionOp().setData().forPath(path, data);
            zk.transaction().forOperations(checkEpoch(), op);
            return null;
        });
    }

    /** Removes a PID node (as the leader does after DELETED or a failed ADDING). */
    public void remove(Instance instance, String pid) {
        call(() -> {
            zk.transaction()
                    .forOperations(checkEpoch(), zk.transactionOp().delete().forPath(instance.pidsPath() + "/" + pid));
            return null;
        });
    }

    /** Deletes the instance's ephemeral node (simulating an operator or a bug; a leader never does). */
    public void deleteInstanceNode(Instance instance) {
        call(() -> {
            zk.delete().forPath(instance.path());
            return null;
        });
    }

    public Optional<PidNode> read(Instance instance, String pid) {
        return readRaw(instance, pid).map(PidNode::decode);
    }

    public Optional<byte[]> readRaw(Instance instance, String pid) {
        return call(() -> {
            try {
                return Optional.of(zk.getData().forPath(instance.pidsPath() + "/" + pid));
            } catch (KeeperException.NoNodeException e) {
                return Optional.empty();
            }
        });
    }

    /** The node's ZooKeeper version, or -1 if it does not exist. */
    public int version(Instance instance, String pid) {
        return call(() -> {
            Stat stat = zk.checkExists().forPath(instance.pidsPath() + "/" + pid);
            return stat == null ? -1 : stat.getVersion();
        });
    }

    public Optional<PidState> state(Instance instance, String pid) {
        return read(instance, pid).map(PidNode::state);
    }

    public boolean exists(String path) {
        return call(() -> zk.checkExists().forPath(path) != null);
    }

    @Override
    public void close() {
        zk.close();
    }

    private CuratorOp checkEpoch() throws Exception {
        return zk.transactionOp().check().withVersion(epochVersion).forPath(layout.epoch());
    }

    private static byte[] text(long value) {
        return Long.toString(value).getBytes(StandardCharsets.UTF_8);
    }

    private interface ZkCall<T> {
        T call() throws Exception;
    }

    private static <T> T call(ZkCall<T> call) {
        try {
            return call.call();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("fake leader: ZooKeeper call failed: " + e, e);
        }
    }
}
