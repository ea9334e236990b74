package io.pidpool.client.internal;

import io.pidpool.client.internal.zk.TreeFollower;
import io.pidpool.core.sim.SimZooKeeper;
import java.util.ArrayList;
import java.util.List;
import org.apache.zookeeper.KeeperException.Code;

/**
 * {@link PidNodes} over a {@link SimZooKeeper.Client}: the simulation's counterpart of {@link
 * CuratorPidNodes}, so that the protocol simulation runs the production {@link PidsWatch} (with its
 * {@link TreeFollower}) and {@link AckWriter}.
 *
 * <p>The simulated client registers a persistent watch locally and re-adds it on every reconnection
 * of its session, so the watch answers OK at once; a watch is never removed (a closed {@link
 * TreeFollower} ignores its notifications). The simulated client has no state events for the watch:
 * the pids watch never proves its view.
 *
 * <p>Concurrency: single-threaded on the simulation's scheduler.
 */
final class SimPidNodes implements PidNodes {
    private final SimZooKeeper.Client zk;

    SimPidNodes(SimZooKeeper.Client zk) {
        this.zk = zk;
    }

    private static Code code(SimZooKeeper.Code code) {
        return Code.valueOf(code.name());
    }

    private static Reply reply(SimZooKeeper.Code code, SimZooKeeper.OpResult r) {
        return code == SimZooKeeper.Code.OK && r != null && r.stat() != null
                ? new Reply(Code.OK, r.data(), r.stat().version(), r.stat().mzxid())
                : Reply.failed(code(code));
    }

    private static List<Reply> replies(List<SimZooKeeper.OpResult> results) {
        if (results == null) {
            return null;
        }
        List<Reply> out = new ArrayList<>(results.size());
        results.forEach(r -> out.add(reply(r.code(), r)));
        return out;
    }

    @Override
    public void setData(String path, byte[] data, int version, Answer<Reply> answer) {
        zk.setData(path, data, version, (c, r) -> answer.done(code(c), reply(c, r)));
    }

    @Override
    public void setDataTogether(List<Write> writes, Answer<List<Reply>> answer) {
        List<SimZooKeeper.Op> ops = new ArrayList<>(writes.size());
        writes.forEach(w -> ops.add(new SimZooKeeper.SetData(w.path(), w.data(), w.version())));
        zk.multi(ops, (c, results) -> answer.done(code(c), replies(results)));
    }

    @Override
    public void getData(String path, Answer<Reply> answer) {
        zk.getData(path, false, (c, r) -> answer.done(code(c), reply(c, r)));
    }

    @Override
    public void readTogether(List<String> paths, Answer<List<Reply>> answer) {
        zk.readMulti(paths, (c, results) -> answer.done(code(c), replies(results)));
    }

    @Override
    public void getChildren(String path, Answer<List<String>> answer) {
        zk.getChildren(path, (c, listing) -> answer.done(code(c), listing == null ? null : listing.children()));
    }

    @Override
    public void watch(String root, TreeFollower.Watch watch, Answer<Void> watched) {
        zk.addPersistentWatch(root, event -> watch.changed(change(event.type()), event.path(), event.zxid()));
        watched.done(Code.OK, null);
    }

    private static TreeFollower.Change change(SimZooKeeper.EventType type) {
        return switch (type) {
            case CREATED -> TreeFollower.Change.CREATED;
            case CHANGED -> TreeFollower.Change.CHANGED;
            case DELETED -> TreeFollower.Change.DELETED;
        };
    }

    @Override
    public void unwatch(String root, TreeFollower.Watch watch) {}
}
