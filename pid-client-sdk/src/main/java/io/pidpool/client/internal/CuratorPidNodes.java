package io.pidpool.client.internal;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.client.internal.zk.TreeFollower.Change;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * {@link PidNodes} over Curator and its raw ZooKeeper handle (multi-ops and persistent watches are
 * sent on the handle, so namespaced paths get the namespace prefix here).
 *
 * <p>Concurrency: thread-safe; answers arrive on ZooKeeper's event thread.
 */
final class CuratorPidNodes implements PidNodes {
    private final CuratorFramework curator;
    private final String prefix;
    private final Map<TreeFollower.Watch, Watcher> watchers = new ConcurrentHashMap<>();

    CuratorPidNodes(CuratorFramework curator, String namespace) {
        this.curator = curator;
        this.prefix = "/" + namespace;
    }

    private ZooKeeper zk() throws Exception {
        return curator.getZookeeperClient().getZooKeeper();
    }

    @Override
    public void setData(String path, byte[] data, int version, Answer<Reply> answer) throws Exception {
        curator.setData()
                .withVersion(version)
                .inBackground((client, event) -> {
                    Code code = Code.get(event.getResultCode());
                    answer.done(code, reply(code, null, event.getStat()));
                })
                .forPath(path, data);
    }

    @Override
    public void setDataTogether(List<Write> writes, Answer<List<Reply>> answer) throws Exception {
        List<Op> ops = new ArrayList<>(writes.size());
        for (Write w : writes) {
            ops.add(Op.setData(prefix + w.path(), w.data(), w.version()));
        }
        zk().multi(ops, (rc, path, ctx, results) -> answer.done(Code.get(rc), replies(results)), null);
    }

    @Override
    public void getData(String path, Answer<Reply> answer) throws Exception {
        curator.getData()
                .inBackground((client, event) -> {
                    Code code = Code.get(event.getResultCode());
                    answer.done(code, reply(code, event.getData(), event.getStat()));
                })
                .forPath(path);
    }

    @Override
    public void readTogether(List<String> paths, Answer<List<Reply>> answer) throws Exception {
        List<Op> ops = new ArrayList<>(paths.size());
        paths.forEach(p -> ops.add(Op.getData(prefix + p)));
        zk().multi(ops, (rc, path, ctx, results) -> answer.done(Code.get(rc), replies(results)), null);
    }

    @Override
    public void getChildren(String path, Answer<List<String>> answer) throws Exception {
        zk().getChildren(prefix + path, false, (rc, p, ctx, children) -> answer.done(Code.get(rc), children), null);
    }

    @Override
    public void watch(String root, TreeFollower.Watch watch, Answer<Void> watched) throws Exception {
        Watcher watcher = watchers.computeIfAbsent(watch, w -> event -> {
            if (event.getType() == Watcher.Event.EventType.None) {
                if (event.getState() != Watcher.Event.KeeperState.SyncConnected) {
                    w.broken();
                }
                return;
            }
            String path = event.getPath();
            if (path == null || !path.startsWith(prefix + "/")) {
                return;
            }
            Change change =
                    switch (event.getType()) {
                        case NodeCreated -> Change.CREATED;
                        case NodeDataChanged -> Change.CHANGED;
                        case NodeDeleted -> Change.DELETED;
                        default -> null;
                    };
            if (change != null) {
                w.changed(change, path.substring(prefix.length()), event.getZxid());
            }
        });
        zk().addWatch(
                        prefix + root,
                        watcher,
                        AddWatchMode.PERSISTENT_RECURSIVE,
                        (rc, path, ctx) -> watched.done(Code.get(rc), null),
                        null);
    }

    @Override
    public void unwatch(String root, TreeFollower.Watch watch) throws Exception {
        Watcher watcher = watchers.remove(watch);
        if (watcher != null) {
            zk().removeWatches(prefix + root, watcher, Watcher.WatcherType.Any, true, (rc, p, ctx) -> {}, null);
        }
    }

    private static Reply reply(Code code, byte[] data, Stat stat) {
        return code == Code.OK && stat != null
                ? new Reply(code, data, stat.getVersion(), stat.getMzxid())
                : Reply.failed(code);
    }

    private static List<Reply> replies(List<OpResult> results) {
        if (results == null) {
            return null;
        }
        List<Reply> out = new ArrayList<>(results.size());
        for (OpResult r : results) {
            if (r instanceof OpResult.SetDataResult set) {
                out.add(reply(Code.OK, null, set.getStat()));
            } else if (r instanceof OpResult.GetDataResult got) {
                out.add(reply(Code.OK, got.getData(), got.getStat()));
            } else if (r instanceof OpResult.ErrorResult error) {
                out.add(Reply.failed(Code.get(error.getErr())));
            } else {
                out.add(Reply.failed(Code.SYSTEMERROR));
            }
        }
        return out;
    }
}
